"""Streaming 10,000,000 users from memory-mapped files against one in-memory evaluate.

    python bench/streaming.py                    # 10,000,000 users x K = 10
    python bench/streaming.py --users 1000000 --block 100000

The workload (power-law truth and top-K, as `fastrank demo` builds it) is written once as
.npy files (indptr, indices, data, topk) to the bench cache directory. Then, each in a
fresh process and alternating:
- in memory: the four files loaded into RAM, one `fr.evaluate` call (timed alone);
- streaming: the files memory-mapped, `fr.Evaluator.update` block by block, `result()`;
three times each, the best time kept.
Each child reports its time and memory: the peak of its private memory (RssAnon, sampled
every 5 ms: what the process allocated) and of its whole resident set (VmHWM, which also
counts the clean file pages of the maps, page cache the OS may drop at any time).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

METRICS = ["precision@10", "recall@10", "ndcg@10", "map@10"]


def files(n_users, k):
    from bench.datasets import _cache_dir
    from fastrank.synthetic import power_law

    stem = _cache_dir() / f"stream_{n_users}_{k}"
    paths = {name: Path(f"{stem}.{name}.npy") for name in ("indptr", "indices", "data", "topk")}
    if all(p.exists() for p in paths.values()):
        return paths
    truth, topk = power_law(n_users, 50_000, k, seed=0)
    np.save(paths["indptr"], truth.indptr.astype(np.int64))
    np.save(paths["indices"], truth.indices.astype(np.int64))
    np.save(paths["data"], truth.data.astype(np.float64))
    np.save(paths["topk"], topk)
    return paths


def _memory_sampler():
    """Start a thread sampling RssAnon; return a function giving (peak RssAnon, VmHWM) in
    bytes."""
    import threading

    peak = [0]
    done = threading.Event()

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024
        return 0

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], status("RssAnon:"))
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()

    def stop():
        done.set()
        thread.join()
        return max(peak[0], status("RssAnon:")), status("VmHWM:")

    return stop


def child(mode, paths, n_users, block):
    import scipy.sparse as sp

    import fastrank as fr

    small = sp.csr_array(np.eye(4))
    fr.evaluate(small, np.array([[0, 1]] * 4), ["ndcg@2"])  # load the kernels
    fr.Evaluator(small, ["ndcg@2"]).update(None, np.array([[0, 1]] * 4)).result()
    base_anon, _ = _memory_sampler()()  # the warmed process before any input
    stop = _memory_sampler()
    mmap = "r" if mode == "streaming" else None
    arrays = {name: np.load(path, mmap_mode=mmap) for name, path in paths.items()}
    truth = sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]),
                         shape=(n_users, 50_000))
    topk = arrays["topk"]
    start = time.perf_counter()
    if mode == "memory":
        res = fr.evaluate(truth, topk, METRICS)
    else:
        ev = fr.Evaluator(truth, METRICS)
        for lo in range(0, n_users, block):
            hi = min(lo + block, n_users)
            ev.update(np.arange(lo, hi), topk[lo:hi])
        res = ev.result()
    seconds = time.perf_counter() - start
    anon, hwm = stop()
    outputs = sum(res.per_user(m).nbytes for m in METRICS) + res.users.nbytes \
        + res.n_relevant.nbytes + res.counted.nbytes
    print(json.dumps({"seconds": seconds, "anon": anon, "hwm": hwm, "base_anon": base_anon,
                      "outputs": outputs, "means": res.to_dict()}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--block", type=int, default=1_000_000)
    parser.add_argument("--child", choices=["memory", "streaming"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    paths = files(args.users, 10)
    if args.child:
        child(args.child, paths, args.users, args.block)
        return
    on_disk = sum(p.stat().st_size for p in paths.values())
    print(f"{args.users:,} users x K = 10, {len(METRICS)} metrics, blocks of {args.block:,} "
          f"users; inputs on disk {on_disk / 2**20:,.0f} MiB")
    runs = {"memory": [], "streaming": []}
    for mode in ["memory", "streaming"] * 3:
        out = subprocess.run([sys.executable, __file__, "--users", str(args.users), "--block",
                              str(args.block), "--child", mode], capture_output=True,
                             text=True, check=True)
        runs[mode].append(json.loads(out.stdout))
    assert runs["memory"][0]["means"] == runs["streaming"][0]["means"]
    mib = 2**20
    for mode, label in (("memory", "in-memory evaluate"), ("streaming", "streaming Evaluator")):
        best = min(runs[mode], key=lambda r: r["seconds"])
        extra = best["anon"] - best["base_anon"]
        print(f"{label:22s} {best['seconds']:6.2f} s  {args.users / best['seconds']:12,.0f} "
              f"users/s  private peak {best['anon'] / mib:7,.0f} MiB (+{extra / mib:,.0f} over "
              f"the warmed process)  resident peak {best['hwm'] / mib:7,.0f} MiB")
    outputs = runs["streaming"][0]["outputs"]
    memory = min(r["seconds"] for r in runs["memory"])
    stream = min(r["seconds"] for r in runs["streaming"])
    best = min(runs["streaming"], key=lambda r: r["seconds"])
    print(f"per-user outputs {outputs / mib:,.0f} MiB; streaming private peak over the warmed "
          f"process = outputs + {(best['anon'] - best['base_anon'] - outputs) / mib:,.0f} MiB; "
          f"streaming / in-memory time {stream / memory:.3f}")


if __name__ == "__main__":
    main()
