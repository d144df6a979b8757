"""End to end past 2**31 stored entries: a memory-mapped truth with int64 indptr.

    python bench/large_nnz.py [--dir /path/with/30GB/free]

Writes a CSR truth of 2,097,152 users x 2,048 items with 1,025 stored entries per user
(nnz = 2,149,580,800 > 2**31) as .npy files: int64 indptr, int32 indices 0..1024 in every
row, float64 data that is 0 (judged non-relevant; the file's holes cost no disk) except in
the last 4,096 users, whose entries all lie beyond 2**31 and are relevant (1.0). The files
are memory-mapped, so the 26 GB never need to fit in memory. Then:
- fr.Evaluator streams every user in blocks from the maps (precision@10, recall@10,
  ndcg@10, map@10 under "trec", where users with m = 0 count and score 0);
- the values are checked against the formulas: list i of the last users holds the
  relevant items 0..9 (all hits) or 2,038..2,047 (no stored entry, all misses).
Not part of CI: it writes about 9 GB (the indices) and reads about 26 GB.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fastrank as fr  # noqa: E402

N_USERS, PER_ROW, N_ITEMS, RELEVANT_USERS = 2**21, 1025, 2048, 4096


def build(directory):
    nnz = N_USERS * PER_ROW
    paths = {name: directory / f"big_{name}.npy" for name in ("indptr", "indices", "data")}
    if all(p.exists() for p in paths.values()):
        return paths
    np.save(paths["indptr"], np.arange(N_USERS + 1, dtype=np.int64) * PER_ROW)
    indices = np.lib.format.open_memmap(paths["indices"], "w+", np.int32, (nnz,))
    pattern = np.arange(PER_ROW, dtype=np.int32)
    rows_per_chunk = 1 << 14
    chunk = np.tile(pattern, rows_per_chunk)
    for lo in range(0, N_USERS, rows_per_chunk):
        indices[lo * PER_ROW:(lo + rows_per_chunk) * PER_ROW] = chunk
    indices.flush()
    del indices
    data = np.lib.format.open_memmap(paths["data"], "w+", np.float64, (nnz,))
    data[(N_USERS - RELEVANT_USERS) * PER_ROW:] = 1.0  # the rest stays a hole of zeros
    data.flush()
    del data
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--block", type=int, default=1 << 18)
    args = parser.parse_args()
    start = time.perf_counter()
    paths = build(args.dir)
    print(f"files ready in {time.perf_counter() - start:.1f} s")
    maps = {name: np.load(path, mmap_mode="r") for name, path in paths.items()}
    truth = sp.csr_array((maps["data"], maps["indices"], maps["indptr"]),
                         shape=(N_USERS, N_ITEMS))
    assert truth.nnz > 2**31 and truth.indptr.dtype == np.int64
    rng = np.random.default_rng(0)
    hits = rng.random(N_USERS) < 0.5
    topk = np.where(hits[:, None], np.arange(10), np.arange(N_ITEMS - 10, N_ITEMS))
    metrics = ["precision@10", "recall@10", "ndcg@10", "map@10"]
    start = time.perf_counter()
    ev = fr.Evaluator(truth, metrics, convention="trec")
    checked = time.perf_counter() - start
    for lo in range(0, N_USERS, args.block):
        hi = min(lo + args.block, N_USERS)
        ev.update(np.arange(lo, hi), topk[lo:hi])
    res = ev.result()
    seconds = time.perf_counter() - start
    last = slice(N_USERS - RELEVANT_USERS, N_USERS)
    m = PER_ROW
    ideal = (1 / np.log2(np.arange(2, 12))).sum()
    expect = {"precision@10": 1.0, "recall@10": 10 / m, "ndcg@10": 1.0, "map@10": 10 / m}
    for name in metrics:
        values = res.per_user(name)
        assert np.all(values[:N_USERS - RELEVANT_USERS] == 0.0), name  # m = 0: counted, 0
        want = np.where(hits[last], expect[name], 0.0)
        np.testing.assert_allclose(values[last], want, rtol=1e-12, err_msg=name)
    assert np.all(res.n_relevant[last] == m) and res.n_users == N_USERS
    print(f"nnz = {truth.nnz:,} (> 2**31 = {2**31:,}); checking the truth {checked:.1f} s, "
          f"{N_USERS:,} users evaluated in {seconds:.1f} s; the last {RELEVANT_USERS:,} "
          f"users' values (entries past 2**31) match the formulas (ideal DCG "
          f"{ideal:.4f})")


if __name__ == "__main__":
    main()
