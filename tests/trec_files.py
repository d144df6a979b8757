"""TREC files from dicts, and trec_eval's printed output read back as numbers."""

import subprocess


def write_trec_files(folder, qrels, run):
    """qrels {qid: {docno: level}} and run {qid: {docno: score}} as trec_eval's files."""
    qrels_path, run_path = folder / "qrels", folder / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {level}\n" for q, docs in qrels.items()
                                  for d, level in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {rank} {score!r} test\n"
                                for q, docs in run.items()
                                for rank, (d, score) in enumerate(docs.items(), start=1)))
    return qrels_path, run_path


def read_trec_eval_output(binary, options, qrels, run):
    """({qid: {measure: value}}, {measure: value of the `all` line}) of a trec_eval run."""
    done = subprocess.run([str(binary), *options, str(qrels), str(run)], capture_output=True,
                          text=True, timeout=120, check=True)
    per_query, totals = {}, {}
    for line in done.stdout.splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        try:
            number = float(value)
        except ValueError:  # runid, relstring
            continue
        (totals if qid == "all" else per_query.setdefault(qid, {}))[name] = number
    return per_query, totals
