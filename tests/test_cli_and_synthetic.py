"""The `fastrank demo` command and the synthetic data set behind it."""

import subprocess
import sys

import numpy as np
import pytest

from fastrank.cli import main
from fastrank.synthetic import _first_distinct, power_law


def test_power_law_shapes_grades_and_distinct_lists():
    truth, topk = power_law(2000, 300, 12, seed=3)
    assert truth.shape == (2000, 300) and topk.shape == (2000, 12)
    assert topk.dtype == np.int32
    assert truth.data.min() >= 1 and truth.data.max() <= 5
    assert np.diff(truth.indptr).min() >= 1  # every user has a relevant item
    assert topk.min() >= -1 and topk.max() < 300
    ranked = np.sort(topk, axis=1)
    assert not np.any((ranked[:, 1:] == ranked[:, :-1]) & (ranked[:, 1:] >= 0))
    again = power_law(2000, 300, 12, seed=3)
    assert (again[1] == topk).all() and (again[0] != truth).nnz == 0


def test_first_distinct_keeps_order_and_pads():
    rows = np.array([[3, 3, 1, 2, 1, 5], [4, 4, 4, 4, 4, 4]])
    assert _first_distinct(rows, 3).tolist() == [[3, 1, 2], [4, -1, -1]]


def test_power_law_rejects_empty_shapes():
    with pytest.raises(ValueError, match="at least 1"):
        power_law(0, 10, 5)


def test_demo_prints_a_table_and_users_per_second(capsys):
    assert main(["demo", "--users", "3000", "--items", "500", "-k", "8", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "3,000 users x 500 items" in out
    for name in ("precision", "ndcg", "auc", "r_precision"):
        assert f"\n{name}" in out
    assert "@5" in out and "@8" in out
    assert "users/s on 1 thread(s)" in out


@pytest.mark.parametrize("argv, message", [
    (["demo", "--users", "0"], "argument --users: expected a number of at least 1, got 0"),
    (["demo", "--convention", "x"], "argument --convention: invalid choice: 'x'"),
    (["evaluate", "--truth", "t.csv"], "the following arguments are required: --topk"),
    (["evaluate", "--truth", "a", "--topk", "b", "--json", "--csv"], "not allowed with"),
    ([], "the following arguments are required: COMMAND"),
    (["nonsense"], "invalid choice: 'nonsense'"),
])
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "usage:" not in err


@pytest.mark.slow
def test_python_dash_m_runs_the_demo():
    done = subprocess.run([sys.executable, "-m", "fastrank", "demo", "--users", "500",
                           "--items", "100", "--convention", "trec"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "convention 'trec'" in done.stdout


def test_demo_compare_prints_the_table_and_writes_the_plot(capsys, tmp_path):
    plot = tmp_path / "compare.svg"
    assert main(["demo", "--users", "2000", "--items", "300", "--compare", str(plot),
                 "--test", "wilcoxon"]) == 0
    out = capsys.readouterr().out
    assert "| model (baseline) | ndcg@10 |" in out and "| shuffled | mrr@10 |" in out
    assert "Wilcoxon signed-rank test against 'model', holm-corrected" in out
    assert plot.stat().st_size > 10_000 and f"written to {plot}" in out


def _numpy_first_distinct(candidates, k, drop=None):
    """What power_law's kernel replaced: the first k distinct ids by a stable sort."""
    n_rows, width = candidates.shape
    order = np.argsort(candidates, axis=1, kind="stable")
    ranked = np.take_along_axis(candidates, order, axis=1)
    repeat = np.zeros((n_rows, width), dtype=bool)
    repeat[:, 1:] = ranked[:, 1:] == ranked[:, :-1]
    is_repeat = np.empty_like(repeat)
    np.put_along_axis(is_repeat, order, repeat, axis=1)
    if drop is not None:
        is_repeat |= drop
    position = np.where(is_repeat, width, np.arange(width)[None, :])
    keep = np.sort(position, axis=1)[:, :k]
    padded = np.concatenate([candidates, np.full((n_rows, 1), -1, candidates.dtype)], axis=1)
    return np.take_along_axis(padded, keep, axis=1).astype(np.int32)


@pytest.mark.parametrize("args", [(3000, 500, 10), (2000, 30, 25), (1, 1, 1), (400, 5, 10)])
def test_power_law_kernels_give_numpys_results(args):
    """The sampling's binary search and the first distinct ids (with and without dropped
    slots), walks of the shared parallel driver, give what np.searchsorted and a stable
    sort give."""
    from fastrank._kernels.synthetic import search_left
    from fastrank.synthetic import _run

    rng = np.random.default_rng(sum(args))
    cdf = np.cumsum(rng.random(args[1]))
    cdf /= cdf[-1]
    # draws, the cdf's own values (ties: the leftmost) and the buckets' edges
    u = np.concatenate([rng.random(5000), cdf[:-1], [0.0, np.nextafter(1.0, 0.0)],
                        np.arange(64) / 64])
    for buckets in (1, 3, args[1], 4 * args[1] + 7):  # the guide table's size
        guide = np.searchsorted(cdf, np.arange(buckets + 1) / buckets).astype(np.int64)
        ranks = np.empty(u.shape, np.int64)
        _run(search_left, u.size, cdf, guide, u, ranks)
        assert np.array_equal(ranks, np.minimum(np.searchsorted(cdf, u), args[1] - 1))
    candidates = rng.integers(0, max(args[1] // 10, 1), (args[0], 2 * args[2])).astype(np.int32)
    drop = rng.random(candidates.shape) < 0.3
    for mask in (None, drop):
        assert np.array_equal(_first_distinct(candidates, args[2], mask),
                              _numpy_first_distinct(candidates, args[2], mask))
