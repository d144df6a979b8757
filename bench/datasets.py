"""Synthetic workloads shared by the benchmarks, cached in memory and on disk.

asv runs every benchmark in a new process; building a 1,000,000 x 100 workload takes
far longer than loading it, so each workload is written once to a cache directory
(FASTRANK_BENCH_CACHE, default: fastrank-bench in the system temp directory).
"""

import gc
import os
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from fastrank.synthetic import power_law

N_ITEMS = 50_000


def timed(fn, repeat=3):
    """(the shortest of `repeat` timed calls of fn in seconds, the last call's value);
    garbage is collected before each call, outside the timing."""
    times, value = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def best_of(fn, repeat=3):
    """The shortest of `repeat` timed calls of fn, in seconds."""
    return timed(fn, repeat)[0]


def _cache_dir():
    default = Path(tempfile.gettempdir()) / "fastrank-bench"
    path = Path(os.environ.get("FASTRANK_BENCH_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=4)
def _stored(name, parts, build):
    """The arrays `build()` returns, kept in the cache folder as name.<part> files (a
    scipy.sparse matrix as .npz, an array as .npy): built once, loaded after."""
    files = [(_cache_dir() / name).with_suffix(f".{part}") for part in parts]
    if all(f.exists() for f in files):
        return tuple(sp.load_npz(f).tocsr() if f.suffix == ".npz" else np.load(f)
                     for f in files)
    built = build()
    for f, obj in zip(files, built):
        if sp.issparse(obj):
            sp.save_npz(f, obj, compressed=False)
        else:
            np.save(f, obj)
    return built


def workload(n_users, k, seed=0):
    """(truth, topk) with power-law popularity, deterministic for the arguments."""
    stem = _cache_dir() / f"power_law_{n_users}_{N_ITEMS}_{k}_{seed}"
    truth_file, topk_file = stem.with_suffix(".truth.npz"), stem.with_suffix(".topk.npy")
    if truth_file.exists() and topk_file.exists():
        return sp.load_npz(truth_file).tocsr(), np.load(topk_file)
    truth, topk = power_law(n_users, N_ITEMS, k, seed=seed)
    sp.save_npz(truth_file, truth, compressed=False)
    np.save(topk_file, topk)
    return truth, topk


def metric_labels(metric_set, k):
    """The metric lists the benchmarks time."""
    if metric_set == "core4":  # what implicit's ranking_metrics_at_k reports
        return [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]
    if metric_set == "all":  # every metric at two cutoffs
        names = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "mar", "ndcg",
                 "ndcg_exp", "dcg", "cg", "auc"]
        cutoffs = sorted({max(1, k // 2), k})
        return [f"{name}@{c}" for name in names for c in cutoffs] + ["r_precision"]
    raise ValueError(f"unknown metric set {metric_set!r}")


@lru_cache(maxsize=2)
def als_workload(n_users, n_items=N_ITEMS, factors=32, iterations=3, seed=0):
    """(train, test, user_factors, item_factors): an 80/20 split of a power-law data set
    and implicit ALS factors fitted on train. Needs implicit the first time; cached."""
    return _stored(f"als_{n_users}_{n_items}_{factors}_{iterations}_{seed}",
                   ("train.npz", "test.npz", "users.npy", "items.npy"),
                   lambda: _fit_als(n_users, n_items, factors, iterations, seed))


def _fit_als(n_users, n_items, factors, iterations, seed):
    from implicit.als import AlternatingLeastSquares
    from threadpoolctl import threadpool_limits

    truth, _ = power_law(n_users, n_items, 10, seed=seed)
    rng = np.random.default_rng(seed + 1)
    in_test = rng.random(truth.nnz) < 0.2
    coo = truth.tocoo()
    parts = []
    for mask in (~in_test, in_test):
        part = sp.csr_matrix((coo.data[mask].astype(np.float32),
                              (coo.row[mask], coo.col[mask])), shape=truth.shape)
        part.indptr = part.indptr.astype(np.int32)  # implicit wants int32 indices
        part.indices = part.indices.astype(np.int32)
        parts.append(part)
    train, test = parts
    model = AlternatingLeastSquares(factors=factors, iterations=iterations, random_state=seed)
    with threadpool_limits(1, "blas"):
        model.fit(train, show_progress=False)
    return train, test, model.user_factors, model.item_factors


def random_factors(n_users, n_items=N_ITEMS, n_factors=32, dtype="float32", seed=0):
    """Gaussian user and item factors, the scale of a fitted ALS model."""
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((n_users, n_factors)) * 0.1).astype(dtype),
            (rng.standard_normal((n_items, n_factors)) * 0.1).astype(dtype))


def random_aspects(n_items, n_aspects, per_item=(1, 3), seed=0):
    """items x aspects 0/1 CSR: each item has per_item[0]..per_item[1] distinct aspects."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(per_item[0], per_item[1] + 1, n_items)
    keys = rng.random((n_items, n_aspects))  # a random subset per item: its smallest keys
    chosen = np.argsort(keys, axis=1)[:, : per_item[1]]
    mask = np.arange(per_item[1])[None, :] < counts[:, None]
    rows = np.repeat(np.arange(n_items), counts)
    cols = chosen[mask]
    return sp.csr_array((np.ones(rows.shape[0], np.int8), (rows, cols)),
                        shape=(n_items, n_aspects))


@lru_cache(maxsize=2)
def aspect_workload(n_users, n_items=27_000, n_aspects=20, k=10, seed=0):
    """(test, train, topk_a, topk_b, item_aspects): the αβ-nDCG benchmark shape. Test and
    train are independent power-law draws over the same users and items; topk_a is a
    plausible model's lists, topk_b a second model's (the first lists, rotated)."""
    def build():
        test, topk_a = power_law(n_users, n_items, k, seed=seed)
        train, _ = power_law(n_users, n_items, k, seed=seed + 1)
        return (test, train, topk_a, np.roll(topk_a, 3, axis=1),
                random_aspects(n_items, n_aspects, seed=seed + 2))

    return _stored(f"aspects_{n_users}_{n_items}_{n_aspects}_{k}_{seed}", _ASPECT_PARTS, build)


_ASPECT_PARTS = ("test.npz", "train.npz", "a.npy", "b.npy", "aspects.npz")


@lru_cache(maxsize=2)
def split_aspect_workload(n_users, n_items=27_000, n_aspects=20, n_train=20, n_test=5, k=10,
                          hit_rate=0.1, seed=0):
    """(test, train, topk_a, topk_b, item_aspects): the realistic αβ-nDCG shape. Each user
    has n_train + n_test distinct power-law items (grades 1..5), the first n_train the
    training profile and the rest the test set; the lists are a plausible model's that
    skips the user's training items (as a recommender filters them): each of 4k slots
    holds one of the user's test items with probability hit_rate (more often near the
    top), else a popular item, and a list is the first k distinct ones not in training.
    topk_b is a second model's (the first lists, rotated)."""
    return _stored(f"split_aspects_{n_users}_{n_items}_{n_aspects}_{n_train}_{n_test}_{k}_"
                   f"{seed}", _ASPECT_PARTS,
                   lambda: _split_aspects(n_users, n_items, n_aspects, n_train, n_test, k,
                                          hit_rate, seed))


def _split_aspects(n_users, n_items, n_aspects, n_train, n_test, k, hit_rate, seed):
    from fastrank.synthetic import _first_distinct, _popularity

    rng = np.random.default_rng(seed)
    popular = _popularity(rng, n_items)
    n_own = n_train + n_test
    own = _first_distinct(popular((n_users, 3 * n_own)), n_own)  # -1 pads: rarely needed
    parts = []
    for cols in (own[:, :n_train], own[:, n_train:]):
        rows = np.repeat(np.arange(n_users), cols.shape[1]).reshape(cols.shape)
        keep = cols >= 0
        grades = rng.integers(1, 6, int(keep.sum())).astype(np.float64)
        parts.append(sp.csr_array((grades, (rows[keep], cols[keep])), shape=(n_users, n_items)))
    train, test = parts
    width = 4 * k
    candidates = popular((n_users, width))
    hit = rng.random((n_users, width)) < hit_rate * np.linspace(1.5, 0.5, width)[None, :]
    pick = n_train + rng.integers(0, n_test, (n_users, width))
    candidates[hit] = np.take_along_axis(own, pick, axis=1)[hit]
    in_train = (candidates[:, :, None] == own[:, None, :n_train]).any(axis=2)
    topk_a = _first_distinct(candidates, k, drop=in_train | (candidates < 0))
    return (test, train, topk_a, np.roll(topk_a, 3, axis=1),
            random_aspects(n_items, n_aspects, seed=seed + 2))


def dense_preferences(n_users, n_aspects, seed=0):
    """A dense users x aspects γ: every aspect has some weight for every user."""
    rng = np.random.default_rng(seed)
    return rng.random((n_users, n_aspects)) + 0.01


def record_columns(n_users, k, ids="int", seed=0):
    """The workload as columns: ({user, item, relevance}, {user, item, score}); with
    ids="str" the user ids are strings such as "u123"."""
    truth, topk = workload(n_users, k, seed)
    coo = truth.tocoo()
    rows, cols = np.nonzero(topk >= 0)
    users_t, users_r = coo.row.astype(np.int64), rows.astype(np.int64)
    if ids == "str":
        users_t = np.char.add("u", users_t.astype(str)).astype(object)
        users_r = np.char.add("u", users_r.astype(str)).astype(object)
    return ({"user": users_t, "item": coo.col.astype(np.int64), "relevance": coo.data},
            {"user": users_r, "item": topk[rows, cols].astype(np.int64),
             "score": (k - cols).astype(np.float64)})


def parquet_files(n_users, k, parts=16):
    """(truth dir, recs dir): the power-law workload as parquet datasets of `parts` files."""
    import pandas as pd

    root = _cache_dir() / f"dask_{n_users}_{k}"
    truth_dir, recs_dir = root / "truth", root / "recs"
    if truth_dir.exists() and recs_dir.exists():
        return truth_dir, recs_dir
    truth, recs = record_columns(n_users, k)
    for directory, columns in ((truth_dir, truth), (recs_dir, recs)):
        directory.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(columns)
        for i, piece in enumerate(np.array_split(np.arange(len(frame)), parts)):
            frame.iloc[piece].to_parquet(directory / f"part-{i:03d}.parquet", index=False)
    return truth_dir, recs_dir


def trec_files(n_queries, depth, seed=0):
    """(qrels path, run path): n_queries queries with `depth` retrieved documents each, 5%
    of them judged relevant, scores with ties, written once to the cache directory."""
    stem = _cache_dir() / f"trec_{n_queries}_{depth}_{seed}"
    qrels, run = stem.with_suffix(".qrels"), stem.with_suffix(".run")
    if qrels.exists() and run.exists():
        return qrels, run
    rng = np.random.default_rng(seed)
    docs = rng.integers(0, 500_000, size=(n_queries, depth * 2))
    with open(run, "w") as out_run, open(qrels, "w") as out_qrels:
        for q in range(n_queries):
            ranked = np.unique(docs[q])[:depth]
            scores = np.round(rng.random(ranked.shape[0]), 2)
            out_run.write("".join(f"{q} Q0 D{d} 0 {s} run\n" for d, s in zip(ranked, scores)))
            judged = ranked[rng.random(ranked.shape[0]) < 0.1]
            out_qrels.write("".join(f"{q} 0 D{d} {int(rng.random() < 0.5)}\n" for d in judged))
    return qrels, run
