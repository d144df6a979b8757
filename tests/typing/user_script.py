"""A user's script, as a type checker sees it: tests/test_typing.py checks it with
`mypy --strict` (no error allowed) and runs it. It calls fastrank's public API the way
the README does: evaluate, the Result (means, per-user arrays, intervals, segments),
compare, the implicit drop-in and fastrank.io's readers."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

import fastrank as fr
from fastrank.implicit import ranking_metrics_at_k


class Popular:
    """A model with implicit's `recommend`: every user gets the most popular items."""

    def __init__(self, train: sp.csr_matrix) -> None:
        counts = np.asarray(train.sum(axis=0)).ravel()
        self.order: NDArray[np.int64] = np.argsort(-counts, kind="stable").astype(np.int64)

    def recommend(self, userids: NDArray[np.int32], user_items: sp.csr_matrix, N: int = 10,
                  filter_already_liked_items: bool = True
                  ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        ids = np.tile(self.order[:N], (len(userids), 1))
        scores = np.tile(np.linspace(1.0, 0.0, ids.shape[1], dtype=np.float32),
                         (len(userids), 1))
        return ids, scores


def evaluate_arrays() -> dict[str, float]:
    """fr.evaluate, the Result, its intervals and segments, fr.compare."""
    truth = sp.csr_array(np.array([[3.0, 0.0, 1.0, 0.0, 0.0],
                                   [0.0, 2.0, 0.0, 0.0, 1.0],
                                   [1.0, 1.0, 0.0, 1.0, 0.0],
                                   [0.0, 0.0, 0.0, 0.0, 2.0]]))
    good = np.array([[0, 2, 1], [1, 4, 0], [3, 0, 1], [4, 2, -1]], dtype=np.int64)
    bad = np.array([[4, 3, 1], [0, 2, 3], [2, 4, -1], [0, 1, 2]], dtype=np.int64)

    res: fr.Result = fr.evaluate(truth, good, ["ndcg@3", "precision@2", "recall@3"])
    other = fr.evaluate(truth, bad, ["ndcg@3", "precision@2", "recall@3"])
    ndcg: float = res["ndcg@3"]
    per_user: NDArray[np.float64] = res.per_user("ndcg@3")
    counted: int = res.n_users
    low, high = res.ci("ndcg@3", n_resamples=200, seed=0)
    normal: tuple[float, float] = res.ci("recall@3", method="normal")
    segments = res.by(np.array(["new", "old", "old", "new"]), ["ndcg@3"])
    means: dict[str, float] = res.to_dict()
    described: str = res.describe("ndcg@3")
    table = fr.compare({"good": res, "bad": other}, ["ndcg@3", "recall@3"], seed=0,
                       n_permutations=200, test="randomization")
    report: str = table.to_text() + "\n" + table.to_markdown()
    assert 0.0 <= low <= ndcg <= high <= 1.0
    assert normal[0] <= res["recall@3"] <= normal[1]
    assert per_user.shape == (4,) and counted == 4
    assert "ndcg@3" in repr(segments) and "ndcg@3" in described and "good" in report
    return means


def drop_in() -> dict[str, float]:
    """implicit's ranking_metrics_at_k, computed by fastrank, for any `recommend`."""
    rng = np.random.default_rng(0)
    train = sp.csr_matrix((rng.random((30, 12)) < 0.3).astype(np.float32))
    test = sp.csr_matrix((rng.random((30, 12)) < 0.2).astype(np.float32))
    metrics = ranking_metrics_at_k(Popular(train), train, test, K=5, show_progress=False)
    precision: float = metrics["precision"]
    assert set(metrics) == {"precision", "map", "ndcg", "auc"} and 0.0 <= precision <= 1.0
    return metrics


def read_files(folder: Path) -> dict[str, float]:
    """fastrank.io: TREC qrels and run files, and a table of recommendations."""
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    qrels_path.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d2 1\n")
    run_path.write_text("q1 Q0 d3 1 2.5 run\nq1 Q0 d1 2 1.5 run\nq2 Q0 d1 1 0.9 run\n"
                        "q2 Q0 d2 2 0.4 run\n")
    qrels: fr.io.Qrels = fr.io.read_qrels(qrels_path)
    run: fr.io.Run = fr.io.read_run(str(run_path))
    truth, topk, queries, documents = fr.io.trec_arrays(qrels, run)
    trec = fr.evaluate(truth, topk, ["ndcg_cut_10", "P_5", "recip_rank"], convention="trec",
                       k=10)
    assert list(queries) == ["q1", "q2"] and list(documents) == ["d1", "d2", "d3"]

    tables: fr.io.Tables = fr.io.from_tables(
        {"user": np.array(["ann", "ann", "bob"]), "item": np.array(["a", "b", "a"]),
         "relevance": np.array([1.0, 2.0, 1.0])},
        {"user": np.array(["ann", "ann", "bob", "bob"]), "item": np.array(["b", "c", "a", "c"]),
         "score": np.array([0.9, 0.5, 0.8, 0.3])})
    frame = tables.evaluate(["ndcg@2", "recall@2"])
    by_user = tables.per_user(frame, library="dict")
    assert list(by_user["user"]) == ["ann", "bob"]
    return {**trec.to_dict(), **frame.to_dict()}


def main(folder: Path) -> int:
    for name, values in (("arrays", evaluate_arrays()), ("implicit", drop_in()),
                         ("files", read_files(folder))):
        shown = ", ".join(f"{label} {value:.4f}" for label, value in values.items())
        print(f"{name}: {shown}")
    return 0


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(main(Path(tmp)))
