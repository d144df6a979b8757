"""The first evaluation of factors on an empty numba cache, with and without a background
compile (`fr.warm_up(..., factors=)`, which `fastrank.implicit.EvalCallback` starts at
construction), in fresh processes, the two alternating.

    python bench/warm_factors.py                  # 3 pairs, 4 s of the caller's own work
    python bench/warm_factors.py --work 8 --runs 2
    python bench/warm_factors.py --als            # EvalCallback on an ALS fit (implicit)

Default: the caller spends `--work` seconds of single-threaded work (standing in for
loading data) between the warm-up and `fr.evaluate_factors` of 100,000 users x 20,000
items; printed: that first call's seconds (with the wait for the warm-up's remainder),
the second call's (nothing to compile), and the whole program's. --als: an
EvalCallback fits implicit's ALS (64 factors, 3 iterations, on 2 threads) over 300,000
users x 30,000 items and evaluates after each iteration; printed: the first iteration's
training and the first and second evaluations (the second loads everything).
"""

import argparse
import os
import subprocess
import sys
import tempfile

FACTORS = """
import sys, time
t0 = time.perf_counter()
import numpy as np, scipy.sparse as sp
import fastrank as fr
warm, work = sys.argv[1] == "1", float(sys.argv[2])
metrics = ["ndcg@10", "recall@10", "precision@10", "auc"]
# the dtypes of the inputs built below: scipy gives int64 indices to a CSR built from
# int64 coordinates
warming = fr.warm_up(metrics, factors=np.float32, values=np.float32,
                     indices=np.int64) if warm else None
rng = np.random.default_rng(0)
end = time.perf_counter() + work
while time.perf_counter() < end:  # the caller's own work, on one core
    np.sort(rng.random(200_000))
n_users, n_items = 100_000, 20_000
users = rng.normal(size=(n_users, 32)).astype(np.float32)
items = rng.normal(size=(n_items, 32)).astype(np.float32)
def interactions(per_user):
    rows = np.repeat(np.arange(n_users), per_user)
    cols = rng.integers(0, n_items, rows.shape[0])
    matrix = sp.csr_array((np.ones(rows.shape[0], np.float32), (rows, cols)),
                          shape=(n_users, n_items))
    matrix.sum_duplicates()
    matrix.data[:] = 1
    return matrix

test, train = interactions(10), interactions(20)
t = time.perf_counter()
if warming is not None:
    warming.wait()  # what is left of the compile
fr.evaluate_factors(users, items, test, metrics, exclude=train)
first = time.perf_counter() - t
t = time.perf_counter()
fr.evaluate_factors(users, items, test, metrics, exclude=train)
print(f"first evaluate_factors {first:6.2f} s (the second {time.perf_counter() - t:5.2f} s), "
      f"program {time.perf_counter() - t0:6.2f} s")
"""

ALS = """
import sys, time
import numpy as np, scipy.sparse as sp
import implicit
from fastrank.implicit import EvalCallback
warm = sys.argv[1] == "1"
n_users, n_items = 300_000, 30_000
rng = np.random.default_rng(0)
nnz = n_users * 20
rows = rng.integers(0, n_users, nnz)
cols = (rng.pareto(1.2, nnz) * 50).astype(np.int64) % n_items
x = sp.csr_matrix((np.ones(nnz, np.float32), (rows, cols)), shape=(n_users, n_items))
x.sum_duplicates()
x.data[:] = 1
held = rng.random(x.nnz) < 0.2
coo = x.tocoo()
test = sp.csr_matrix((coo.data[held], (coo.row[held], coo.col[held])), shape=x.shape)
train = sp.csr_matrix((coo.data[~held], (coo.row[~held], coo.col[~held])), shape=x.shape)
cb = EvalCallback(test, ["ndcg@10", "precision@10", "recall@10", "auc"], train=train,
                  warm=warm)
cb.fit(implicit.als.AlternatingLeastSquares(factors=64, iterations=3, random_state=0),
       train, show_progress=False)
h = cb.history
print(f"iteration 1 trains {h[0]['train_seconds']:5.2f} s, evaluation 1 "
      f"{h[0]['eval_seconds']:6.2f} s, evaluation 2 {h[1]['eval_seconds']:6.2f} s")
"""


def run(program, *args):
    env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="numba-warm-"),
               OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", program, *args], env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=float, default=4.0,
                        help="seconds of the caller's own work before the first call")
    parser.add_argument("--als", action="store_true",
                        help="EvalCallback on implicit's ALS instead (needs implicit)")
    args = parser.parse_args()
    for _ in range(args.runs):
        for warm in ("0", "1"):
            label = "warm_up " if warm == "1" else "no warm "
            if args.als:
                print(label, run(ALS, warm), flush=True)
            else:
                print(label, run(FACTORS, warm, str(args.work)), flush=True)


if __name__ == "__main__":
    main()
