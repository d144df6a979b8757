"""Peak extra memory of evaluating 10,000,000 users from memory-mapped float32 / int32 files.

    python bench/memory.py                          # 10,000,000 users x K = 10
    python bench/memory.py --users 1000000 --cases evaluate,streaming

The workload (power-law truth and top-K, as `fastrank demo` builds it) is written once as
.npy files to the bench cache directory in the narrow dtypes a large pipeline keeps:
float32 relevance, int32 indptr and indices, int32 top-K; for evaluate_factors a second
truth over a small catalogue (so that scoring every item stays quick) with float32 user
and item factors. Each case then runs in a fresh process on the memory-mapped (read-only)
files, after a warm-up on small inputs of the same types (compiling or loading the
kernels is not what is measured):

- evaluate: `fr.evaluate` with the four classic metrics, per-user values kept;
- evaluate, means only: the same with `per_user=False` (where fastrank has it);
- streaming: `fr.Evaluator.update` block by block, then `result()`;
- factors: `fr.evaluate_factors` with the same metrics.

Each child reports the peak of its private memory (RssAnon, sampled every 5 ms; the page
cache of the maps is not counted) over the warmed process. The budget of issue 18 is the
per-user values of the metrics plus 256 MiB.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.streaming import _memory_sampler  # noqa: E402

METRICS = ["precision@10", "recall@10", "ndcg@10", "map@10"]
CASES = ("evaluate", "means", "streaming", "factors")
N_ITEMS = 50_000
# the catalogue of the factors case, and its factors per item
FACTOR_ITEMS, N_FACTORS = 256, 16
MIB = 2 ** 20


def files(n_users, k):
    """Paths of the narrow-dtype .npy files of the workload (written on first use)."""
    from bench.datasets import _cache_dir
    from fastrank.synthetic import power_law

    stem = _cache_dir() / f"narrow_{n_users}_{k}"
    names = ("indptr", "indices", "data", "topk", "f_indptr", "f_indices", "f_data",
             "user_factors", "item_factors")
    paths = {name: Path(f"{stem}.{name}.npy") for name in names}
    if all(p.exists() for p in paths.values()):
        return paths
    truth, topk = power_law(n_users, N_ITEMS, k, seed=0)
    np.save(paths["indptr"], truth.indptr.astype(np.int32))
    np.save(paths["indices"], truth.indices.astype(np.int32))
    np.save(paths["data"], truth.data.astype(np.float32))
    np.save(paths["topk"], topk.astype(np.int32))
    del truth, topk
    test, _ = power_law(n_users, FACTOR_ITEMS, 1, seed=1)
    np.save(paths["f_indptr"], test.indptr.astype(np.int32))
    np.save(paths["f_indices"], test.indices.astype(np.int32))
    np.save(paths["f_data"], test.data.astype(np.float32))
    del test
    rng = np.random.default_rng(2)
    users = np.lib.format.open_memmap(paths["user_factors"], mode="w+", dtype=np.float32,
                                      shape=(n_users, N_FACTORS))
    for lo in range(0, n_users, 1 << 20):
        hi = min(lo + (1 << 20), n_users)
        users[lo:hi] = rng.standard_normal((hi - lo, N_FACTORS), np.float32)
    users.flush()
    del users
    np.save(paths["item_factors"],
            rng.standard_normal((FACTOR_ITEMS, N_FACTORS), np.float32))
    return paths


def _truth(arrays, prefix, n_users, n_items):
    import scipy.sparse as sp

    return sp.csr_array((arrays[prefix + "data"], arrays[prefix + "indices"],
                         arrays[prefix + "indptr"]), shape=(n_users, n_items))


def _read_only(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _warm_up(case):
    """Compile (or load) the kernels on small inputs of the types the case will use:
    read-only float32 / int32 arrays, as np.load(mmap_mode="r") gives."""
    import scipy.sparse as sp

    import fastrank as fr

    rng = np.random.default_rng(0)
    n_users, n_items = 64, 40
    dense = (rng.random((n_users, n_items)) < 0.2) * rng.integers(1, 6, (n_users, n_items))
    small = sp.csr_array(dense.astype(np.float32))
    parts = _read_only(small.indptr.astype(np.int32), small.indices.astype(np.int32),
                       small.data.astype(np.float32))
    truth = sp.csr_array((parts[2], parts[1], parts[0]), shape=(n_users, n_items))
    topk, = _read_only(rng.integers(-1, n_items, (n_users, 10)).astype(np.int32))
    if case == "evaluate":
        fr.evaluate(truth, topk, METRICS)
    elif case == "means":
        fr.evaluate(truth, topk, METRICS, per_user=False)
    elif case == "streaming":
        ev = fr.Evaluator(truth, METRICS)
        ev.update(np.arange(0, 32), topk[:32]).update(np.arange(32, 64), topk[32:])
        ev.result()
    else:
        users, items = _read_only(rng.standard_normal((n_users, N_FACTORS), np.float32),
                                  rng.standard_normal((n_items, N_FACTORS), np.float32))
        fr.evaluate_factors(users, items, truth, METRICS)


def child(case, paths, n_users, block):
    import fastrank as fr

    try:
        _warm_up(case)
    except TypeError as err:  # an option this version of fastrank does not have
        print(json.dumps({"skipped": str(err)}))
        return
    base_anon, _ = _memory_sampler()()  # the warmed process before any input
    stop = _memory_sampler()
    arrays = {name: np.load(path, mmap_mode="r") for name, path in paths.items()}
    start = time.perf_counter()
    if case in ("evaluate", "means"):
        truth = _truth(arrays, "", n_users, N_ITEMS)
        res = fr.evaluate(truth, arrays["topk"], METRICS,
                          **({"per_user": False} if case == "means" else {}))
    elif case == "streaming":
        truth = _truth(arrays, "", n_users, N_ITEMS)
        topk = arrays["topk"]
        ev = fr.Evaluator(truth, METRICS)
        for lo in range(0, n_users, block):
            hi = min(lo + block, n_users)
            ev.update(np.arange(lo, hi), topk[lo:hi])
        res = ev.result()
    else:
        truth = _truth(arrays, "f_", n_users, FACTOR_ITEMS)
        res = fr.evaluate_factors(arrays["user_factors"], arrays["item_factors"], truth,
                                  METRICS)
    seconds = time.perf_counter() - start
    anon, hwm = stop()
    values = 0 if case == "means" else len(METRICS) * n_users * 8
    held = sum(a.nbytes for a in (res.users, res.n_relevant, res.counted)
               if isinstance(a, np.ndarray))
    print(json.dumps({"seconds": seconds, "extra": anon - base_anon, "hwm": hwm,
                      "values": values, "held": held, "means": res.to_dict()}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--block", type=int, default=1_000_000,
                        help="users per block of the streaming case")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    paths = files(args.users, 10)
    if args.child:
        child(args.child, paths, args.users, args.block)
        return
    sizes = {name: p.stat().st_size for name, p in paths.items()}
    print(f"{args.users:,} users x K = 10, {len(METRICS)} metrics; memory-mapped inputs: "
          f"truth {sum(sizes[n] for n in ('indptr', 'indices', 'data')) / MIB:,.0f} MiB "
          f"(float32 data, int32 indices and indptr), top-K {sizes['topk'] / MIB:,.0f} MiB "
          f"(int32); factors case: {FACTOR_ITEMS} items, {N_FACTORS} float32 factors")
    print(f"{'case':24s} {'seconds':>8s} {'peak extra':>11s} {'per-user values':>16s} "
          f"{'budget':>8s}  {'users/n_relevant/counted':>24s}")
    for case in args.cases.split(","):
        out = subprocess.run([sys.executable, __file__, "--users", str(args.users), "--block",
                              str(args.block), "--child", case], capture_output=True,
                             text=True)
        if out.returncode:
            print(f"{case:24s} failed: {out.stderr.strip().splitlines()[-1]}")
            continue
        run = json.loads(out.stdout)
        if "skipped" in run:
            print(f"{case:24s} skipped: {run['skipped']}")
            continue
        budget = run["values"] + 256 * MIB
        verdict = "ok" if run["extra"] <= budget else "OVER"
        print(f"{case:24s} {run['seconds']:8.2f} {run['extra'] / MIB:7,.0f} MiB "
              f"{run['values'] / MIB:12,.0f} MiB {budget / MIB:4,.0f} MiB  "
              f"{run['held'] / MIB:20,.0f} MiB  {verdict}")


if __name__ == "__main__":
    main()
