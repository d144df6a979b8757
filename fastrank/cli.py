"""The `fastrank` command (also `python -m fastrank`)."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

import numpy as np

from ._version import __version__
from . import dialects, registry
from .dialects import DIALECTS
from .evaluate_topk import evaluate
from .grammar import split_labels
from .io.files import output_kind, read_inputs, write_per_user
from .io import ties
from .io.tables import lists_k, per_user_table
from .io.text import writable
from .plots import plot_compare
from .progress import stage_bar
from .registry import CONVENTIONS, METRICS
from .stats import compare
from .synthetic import power_law
from .trec import _ATOL, c_long, evaluate_files
from .validation import check_memory
from .warm import warm_up

DEMO_METRICS = ("precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "ndcg_exp", "auc")


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ASCII digits (underscores allowed: 1_000) of at
    least `minimum`; other scripts' digits ('１０'), which int() takes, are refused as a
    label's cutoff is."""
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", "")) if text.isascii() else None
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"expected a whole number in ASCII digits, got "
                                             f"{text!r}")
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"expected a number of at least {minimum}, got {value}")
        return value
    return parse


_positive_int = _int_at_least(1)


def _dialect(text: str) -> str:
    """An argparse type: a dialect as Python's dialect= takes it (TREC_EVAL, trec-eval)."""
    try:
        return dialects.check_dialect(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _c_long(minimum: int) -> Callable[[str], int]:
    """An argparse type reading a whole number as C's atol does (trec_eval's options:
    "1.5" is 1), at least `minimum`; text that does not start with a number is an error."""
    def parse(text: str) -> int:
        match = _ATOL.match(text)
        if match is None:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
        value = c_long(match)
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"expected a number of at least {minimum}, got {text!r}")
        return value
    return parse


def run_demo(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    import numba  # loaded when a kernel runs, not at import

    out = sys.stdout if out is None else out
    if args.compare:  # a bad folder fails before the demo's minute of work
        writable(args.compare, "--compare")
    # building the data takes about 64 bytes per user and list slot, 256 per user
    check_memory(args.users * (64 * args.k + 256) + args.items * 24,
                 f"the demo's data ({args.users:,} users x {args.items:,} items, K = {args.k})",
                 "use fewer --users or a smaller -k")
    cutoffs = sorted({min(5, args.k), args.k})
    labels = [f"{name}@{k}" for name in DEMO_METRICS for k in cutoffs] + ["r_precision"]
    with stage_bar(3, _show_progress(args), "fastrank demo") as bar:
        # the evaluation's kernels compile (or load) in a second process while this one
        # builds the data: on an empty cache the two take seconds each, on one core each
        warming = warm_up(labels, k=args.k, convention=args.convention, n_users=args.users,
                          values=np.float64, indices=np.int32, ids=np.int32)
        bar.stage(f"building {args.users:,} users' data")
        start = time.perf_counter()
        truth, topk = power_law(args.users, args.items, args.k, seed=args.seed)
        built = time.perf_counter() - start

        # the first call is timed with the wait for the background compile: it loads the
        # very kernels that call runs (or compiles them, if the compile failed)
        bar.stage("first call: compiling or loading the kernels")
        start = time.perf_counter()
        warming.wait()
        evaluate(truth, topk, labels, convention=args.convention, n_threads=args.threads)
        first_call = time.perf_counter() - start

        bar.stage("evaluating")
        start = time.perf_counter()
        res = evaluate(truth, topk, labels, convention=args.convention, n_threads=args.threads)
        elapsed = time.perf_counter() - start

    print(f"fastrank {__version__} demo: {args.users:,} users x {args.items:,} items, "
          f"{truth.nnz:,} relevant pairs, K = {args.k} (built in {built:.1f} s)", file=out)

    print(f"convention {args.convention!r}: {res.n_users:,} users counted\n", file=out)
    header = "metric".ljust(12) + "".join(f"@{k}".rjust(10) for k in cutoffs)
    print(header, file=out)
    print("-" * len(header), file=out)
    for name in DEMO_METRICS:
        values = "".join(f"{res[f'{name}@{k}']:10.4f}" for k in cutoffs)
        print(name.ljust(12) + values, file=out)
    print("r_precision".ljust(12) + f"{res['r_precision']:10.4f}", file=out)
    threads = args.threads or numba.get_num_threads()
    print(f"\n{len(labels)} metrics in one pass: {elapsed:.3f} s, "
          f"{args.users / elapsed:,.0f} users/s on {threads} thread(s) "
          f"(first call, compile or cache load and one pass: {first_call:.2f} s; the "
          f"compile runs beside the data's build)", file=out)
    if args.compare:
        compare_demo(truth, topk, args, out)
    return 0


def compare_demo(truth: Any, topk: Any, args: argparse.Namespace, out: IO[str]) -> None:
    """Two systems on the demo's users, compared: the demo's lists ("model") and the same
    lists with the top 3 items of one user in five moved to the end ("shuffled")."""

    rng = np.random.default_rng(args.seed + 1)
    shuffled = topk.copy()
    moved = rng.random(topk.shape[0]) < 0.2
    shuffled[moved] = np.roll(topk[moved], -3, axis=1)
    metrics = [f"ndcg@{args.k}", f"recall@{args.k}", f"mrr@{args.k}", "precision@1"]
    results = {name: evaluate(truth, lists, metrics, convention=args.convention,
                                 curves=["ndcg", "recall"])
               for name, lists in (("model", topk), ("shuffled", shuffled))}
    table = compare(results, metrics, test=args.test, seed=args.seed)
    print("\n" + table.to_markdown(), file=out)
    plot_compare(results, ["ndcg", "recall"], path=args.compare)
    print(f"\nmetric@k curves with 95% intervals written to {args.compare}", file=out)


def run_trec(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    out = sys.stdout if out is None else out
    with stage_bar(3, _show_progress(args), "fastrank trec") as bar:
        report = evaluate_files(args.qrels, args.run, args.measure, relevance_level=args.level,
                                depth=args.max_docs, complete=args.complete,
                                judged_only=args.judged_only, num_docs=args.num_docs,
                                zscores=args.zscores, stage=bar.stage)
    if out is sys.stdout and hasattr(out, "reconfigure"):
        # ids with bytes that are not UTF-8 (read as surrogate escapes) print as those
        # bytes, as trec_eval prints them
        out.reconfigure(errors="surrogateescape")
    for line in report.lines(per_query=args.per_query, summary=not args.no_summary):
        print(line, file=out)
    return 0


DEFAULT_METRICS = ("precision", "recall", "ndcg", "map", "mrr", "hit_rate")


def run_evaluate(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    out = sys.stdout if out is None else out
    if args.per_user:  # a bad name or folder fails before the evaluation
        output_kind(args.per_user)
        writable(args.per_user, "--per-user")
    convention = args.convention or ("trec" if args.trec else "recsys")
    steps = 3 + bool(args.per_user)
    asked = [m for text in args.metric or () for m in split_labels(text)]
    # equal scores in the order of the names' tools, where they agree on one
    orders = ties.wanted(asked, convention, args.dialect, cut=args.k is not None)
    with stage_bar(steps, _show_progress(args), "fastrank evaluate") as bar:
        inputs = read_inputs(args.truth, args.topk, k=args.k, trec=args.trec, stage=bar.stage,
                             ties=ties.pick(orders))
        if inputs.tied:
            _warn_ties(orders)
        k = inputs.topk.shape[1] if args.k is None else args.k
        metrics = asked or [f"{name}@{k}" for name in DEFAULT_METRICS]
        bar.stage(f"evaluating {inputs.topk.shape[0]:,} users")
        # the largest cutoff, past the longest list, as from_tables' evaluate and Dask
        cut = args.k if args.k is not None else lists_k(inputs.topk.shape[1], metrics,
                                                        convention, args.dialect)
        res = evaluate(inputs.truth, inputs.topk, metrics, convention=convention,
                       dialect=args.dialect, k=cut, n_threads=args.threads)
        if args.per_user:
            bar.stage("writing the per-user file")
            write_per_user(args.per_user, per_user_table(res, inputs.user_ids, library="dict"))
    counts = {"users": int(res.users.shape[0]),  # type: ignore[union-attr]  # per_user=True
              "counted": res.n_users,
              "without_recommendations": inputs.without_recommendations,
              "without_truth": inputs.without_truth}
    means = {name: _rounded(res[name], args.places) for name in res.metrics}
    if args.json:
        print(json.dumps({**means, "counts": counts, "convention": res.convention,
                          "k": int(res.k)},  # type: ignore[arg-type]  # a ranking has a k
                         indent=2), file=out)
    elif args.csv:  # quoted as CSV quotes: a label may hold commas (f_beta(beta=2, rel=2))
        table = csv.writer(out, lineterminator="\n")
        table.writerow(["metric", "mean", "users"])
        for name in res.metrics:
            table.writerow([name, "" if means[name] is None else repr(means[name]),
                            res.n_users])
    else:
        what = "queries" if args.trec else "users"
        print(f"{counts['users']:,} {what}, {counts['counted']:,} counted (convention "
              f"{res.convention}, K = {res.k}); "
              f"{counts['without_recommendations']:,} without recommendations, "
              f"{counts['without_truth']:,} without truth", file=out)
        places = 6 if args.places is None else args.places
        width = max(len("metric"), *(len(name) for name in res.metrics))
        digits = max(len("mean"), places + 4)
        print(f"{'metric':<{width}}  {'mean':>{digits}}", file=out)
        for name in res.metrics:
            note = "  (catalogue)" if name in res.catalogue else ""
            print(f"{name:<{width}}  {res[name]:>{digits}.{places}f}{note}", file=out)
    return 0


def _warn_ties(orders: ties.Wanted) -> None:
    """`fastrank evaluate: warning: ...` on stderr, one line, for the names whose tool
    orders the inputs' tied scores otherwise than the lists do."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", dialects.TieOrder)
        ties.check_ties(orders, ties.pick(orders), "Ask for each tool's names in a call "
                        "of their own, whose lists then follow that tool's order where "
                        "fastrank builds it")
    for warning in caught:
        print(f"fastrank evaluate: warning: {_one_line(Exception(warning.message))}",
              file=sys.stderr)


def _rounded(value: float, places: int | None) -> float | None:
    """A mean for JSON and CSV: None for NaN, else exact (repr) or rounded to `places`."""
    if value != value:
        return None
    return value if places is None else round(value, places)


def _show_progress(args: argparse.Namespace) -> bool:
    """--progress / --no-progress, or by default a bar only where stderr is a terminal."""
    if args.progress is not None:
        return bool(args.progress)
    return sys.stderr.isatty()


def run_metrics(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    out = sys.stdout if out is None else out
    if args.markdown:
        print(dialects.markdown() if args.dialects else registry.markdown(), file=out)
        return 0
    if args.dialects:
        for dialect, table in dialects.TABLES.items():
            print(f"{dialect}:", file=out)
            for name, meaning in table.items():
                what = (f"refused: {meaning.reason}" if isinstance(meaning, dialects.Refusal)
                        else f"{meaning.metric} ({meaning.convention})"
                        + (f"; {meaning.note}" if meaning.note else ""))
                print(f"  {name:<24} {what}", file=out)
        for dialect, (base, overrides) in dialects.VARIANTS.items():
            print(f"{dialect}: {base}'s names, but for", file=out)
            for name, meaning in overrides.items():
                print(f"  {name:<24} refused: {meaning.reason}", file=out)
        return 0
    labels = [_written(metric) for metric in METRICS.values()]
    width = max(14, *(len(label) for label in labels))
    for label, metric in zip(labels, METRICS.values()):
        print(f"{label:<{width}} {metric.family:<9} {metric.formula}", file=out)
    return 0


def _written(metric: registry.Metric) -> str:
    """A metric's name as a label takes it, with the parameters it needs (an example
    value): 'iprec(recall=0.3)', 'ndcg@k'."""
    needed = [f"{p.name}={p.example}" for p in metric.params if p.needed]
    return (metric.name + (f"({', '.join(needed)})" if needed else "")
            + ("@k" if metric.cutoff else ""))


class UsageError(Exception):
    """A command line argparse refuses: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see {self.prog.split()[0]} "
                         f"--help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fastrank", description="Fast offline evaluation of rankings.")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print fastrank's version and those of Python, numba, numpy and "
                             "scipy, then exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                title="commands", metavar="COMMAND",
                                help="`fastrank COMMAND --help` describes each one")
    demo = sub.add_parser(
        "demo", help="evaluate a synthetic power-law data set and print metrics and users/s")
    demo.add_argument("--users", type=_positive_int, default=1_000_000,
                      help="synthetic users, one list each (default 1,000,000)")
    demo.add_argument("--items", type=_positive_int, default=50_000,
                      help="catalogue size (default 50,000)")
    demo.add_argument("-k", type=_positive_int, default=10, help="list length K (default 10)")
    demo.add_argument("--seed", type=_int_at_least(0), default=0,
                      help="random seed (default 0)")
    demo.add_argument("--threads", type=_positive_int, default=None,
                      help="numba threads (default: all)")
    demo.add_argument("--convention", choices=CONVENTIONS, default="recsys",
                      help=CONVENTION_HELP + " (default recsys)")
    demo.add_argument("--compare", metavar="PLOT", default=None,
                      help="also compare the demo's lists with a shuffled copy: print the "
                           "paired-test table and draw ndcg@k / recall@k curves to PLOT "
                           "(.png or .svg; needs matplotlib)")
    demo.add_argument("--test", choices=("t", "wilcoxon", "randomization"), default="t",
                      help="the paired test of --compare (default t)")
    _progress_option(demo)
    demo.set_defaults(func=run_demo)

    trec = sub.add_parser(
        "trec", help="trec_eval's measures and output for a TREC qrels and run file",
        description="Evaluate a TREC run as trec_eval 10.0 does and print what it prints: "
                    "measure<TAB>qid|all<TAB>value. Without -m, trec_eval's default "
                    "(official) set. Files may be gzip-compressed.")
    trec.add_argument("qrels", help="qid iter docno rel, one judgment per line")
    trec.add_argument("run", help="qid Q0 docno rank score runid, one document per line")
    trec.add_argument("-q", dest="per_query", action="store_true",
                      help="print every query's values before the 'all' summary")
    trec.add_argument("-n", "--nosummary", dest="no_summary", action="store_true",
                      help="print no 'all' summary (with -q: the queries' lines alone)")
    trec.add_argument("-c", dest="complete", action="store_true",
                      help="judged queries without results count, scoring 0")
    trec.add_argument("-M", dest="max_docs", type=_c_long(1), default=None,
                      help="use only the first N documents of each query's ranking")
    trec.add_argument("-l", dest="level", type=_c_long(0), default=1,
                      help="relevance level: a document is relevant at rel >= N (default 1)")
    trec.add_argument("-m", dest="measure", action="append", default=None,
                      help="a measure (repeatable): map, P.5,10, ndcg.1=3,2=9, rbp.p=0.8, "
                           "utility.1,-1,0,0, ...; or a set: official, set, all_trec")
    trec.add_argument("-J", dest="judged_only", action="store_true",
                      help="drop unjudged documents from every ranking before measuring "
                           "(trec_eval's -J)")
    trec.add_argument("-N", dest="num_docs", type=_c_long(0), default=None,
                      help="documents in the collection (read by utility's fourth "
                           "coefficient; default 0, as trec_eval's)")
    trec.add_argument("-Z", dest="zscores", default=None, metavar="ZFILE",
                      help="print z-scores against the 'qid measure mean stddev' lines of "
                           "ZFILE instead of raw values")
    _progress_option(trec)
    trec.set_defaults(func=run_trec)

    ev = sub.add_parser(
        "evaluate", help="ranking metrics for recommender files (npz/npy, parquet or CSV)",
        description="Evaluate recommendations against judgments and print the mean of each "
                    "metric. --truth: a scipy.sparse .npz (users x items) or a table with "
                    "columns user,item,relevance. --topk: a .npy of item ids (row r is "
                    "truth row r, -1 pads) or a table with columns user,item,score (or "
                    "user,rank,item: rank r is position r of the list, a skipped rank an "
                    "empty slot). Tables are .parquet or .csv/.tsv (optionally .gz) "
                    "with a header line; ids of any type. With --trec, a TREC qrels file "
                    "and a TREC run file.")
    ev.add_argument("--truth", required=True,
                    help="judgments: .npz, .parquet or .csv/.tsv (a TREC qrels file with "
                         "--trec)")
    ev.add_argument("--topk", required=True,
                    help="recommendations: .npy, .parquet or .csv/.tsv (a TREC run file "
                         "with --trec)")
    ev.add_argument("--trec", action="store_true",
                    help="--truth is a TREC qrels file (qid iter docno rel) and --topk a TREC "
                         "run (qid Q0 docno rank score runid), read as `fastrank trec` reads "
                         "them; judged queries without results score 0 (trec_eval -c); "
                         "the convention defaults to trec")
    ev.add_argument("-m", "--metric", action="extend", nargs="+", default=None,
                    help="metrics such as ndcg@10 recall@10 (repeatable, or comma "
                         "separated); default: " + " ".join(DEFAULT_METRICS) + " at K")
    ev.add_argument("--convention", choices=CONVENTIONS, default=None,
                    help=CONVENTION_HELP + " (default recsys; trec with --trec)")
    ev.add_argument("--dialect", type=_dialect, default=None,
                    metavar="{" + ",".join(DIALECTS) + "}",
                    help="read the metric names as this tool writes them (default: "
                         "fastrank's names, then any tool's unambiguous name)")
    ev.add_argument("-k", type=_positive_int, default=None,
                    help="cut every list at k (default: the longest list; by rank, "
                         "the largest rank)")
    ev.add_argument("--threads", type=_positive_int, default=None,
                    help="numba threads (default: all)")
    shape = ev.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true",
                       help="print a JSON object: the mean of each metric, counts, convention")
    shape.add_argument("--csv", action="store_true", help="print metric,mean,users as CSV")
    ev.add_argument("--per-user", metavar="FILE", default=None,
                    help="also write every user's values, exactly, in the format of the "
                         "name: .csv, .tsv, .jsonl (one JSON object per user; each may "
                         "end in .gz) or .parquet; empty (null in JSONL) where a user is not "
                         "counted")
    ev.add_argument("--places", type=_int_at_least(0), default=None, metavar="N",
                    help="decimals of the printed means (default: 6 in the table, every "
                         "digit with --json and --csv)")
    _progress_option(ev)
    ev.set_defaults(func=run_evaluate)
    names = sub.add_parser(
        "metrics", help="list every metric (the registry) or every tool's metric names",
        description="The registry of metrics, fastrank.METRICS: name, family, formula per "
                    "convention, how the mean is taken and what computes it; with "
                    "--dialects, the names of ir-measures, ranx, trec_eval, RecBole and "
                    "RecTools that fastrank computes as each tool does.")
    names.add_argument("--dialects", action="store_true",
                       help="the other tools' names instead of the registry")
    names.add_argument("--markdown", action="store_true", help="a markdown table")
    names.set_defaults(func=run_metrics)
    return parser


CONVENTION_HELP = ("which formula the metric names stand for and which users count: recsys "
                   "(map@k divides by min(k, m), m the user's number of relevant items), "
                   "trec (as trec_eval, ranx and ir-measures: map@k divides by m) or "
                   "implicit (as implicit 0.7)")


def _progress_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar on stderr (default: only when stderr is a "
                             "terminal)")


class _Version(argparse.Action):
    """--version: the text is built when asked for (it reads package metadata)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """`fastrank --version`: this package and what its numbers depend on."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    python = ".".join(map(str, sys.version_info[:3]))
    return (f"fastrank {__version__} (distribution fastrank-eval); Python {python}, "
            + ", ".join(f"{name} {installed(name)}" for name in ("numba", "numpy", "scipy")))


def main(argv: Sequence[str] | None = None) -> int:
    """The command: its exit code. A reader that stops early (`fastrank ... | head -1`)
    ends any command quietly with status 0, as Python's documentation on SIGPIPE says:
    stdout is flushed here, inside the handler, where the last buffered output would
    otherwise fail at exit ("Exception ignored ... BrokenPipeError", status 120), and is
    then pointed at devnull so that nothing is written to the closed pipe again."""
    try:
        try:
            return _run(argv)
        finally:  # also after --version and --help, which end with SystemExit
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(_one_line(exc), file=sys.stderr)
        return 2
    try:
        return args.func(args)  # type: ignore[no-any-return]  # run_*: an exit code
    except BrokenPipeError:
        raise  # the reader has gone: main ends quietly (an OSError, but not an error)
    except (ValueError, TypeError, OSError, ImportError, MemoryError) as exc:
        print(f"fastrank {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2


def _one_line(exc: BaseException) -> str:
    """The message of an exception on one line (a file name may hold a newline)."""
    text = str(exc) or type(exc).__name__
    return " ".join(text.split("\n"))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
