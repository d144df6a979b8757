"""fr.Evaluator: blocks in any order and split, merged or not, give fr.evaluate's Result;
repeated users, mismatched merges and bad blocks are errors; memory-mapped inputs are
read in place; evaluate's show_progress changes nothing but the bar."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fastrank as fr
from fastrank.synthetic import power_law

from .conftest import ALL_METRICS
from .strategies import cases, metric_lists

CONVENTIONS = ["recsys", "trec", "implicit"]


def assert_same(got, want, rel=0.0):
    assert got.metrics == want.metrics
    np.testing.assert_array_equal(got.users, want.users)
    np.testing.assert_array_equal(got.counted, want.counted)
    np.testing.assert_array_equal(got.n_relevant, want.n_relevant)
    for name in want.metrics:
        if name not in want.catalogue:
            np.testing.assert_array_equal(got.per_user(name), want.per_user(name))
        if rel:
            assert got[name] == pytest.approx(want[name], rel=rel, nan_ok=True)
        else:
            assert got[name] == want[name] or (np.isnan(got[name]) and np.isnan(want[name]))


@pytest.fixture(scope="module")
def workload():
    truth, topk = power_law(3000, 400, 10, seed=3)
    return truth, topk


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_blocks_in_order_equal_one_evaluate(workload, convention):
    truth, topk = workload
    want = fr.evaluate(truth, topk, ALL_METRICS, convention=convention)
    ev = fr.Evaluator(truth, ALL_METRICS, convention=convention)
    for lo in range(0, 3000, 700):
        ev.update(np.arange(lo, min(lo + 700, 3000)), topk[lo:lo + 700])
    assert ev.n_rows == 3000 and ev.k == 10
    assert_same(ev.result(), want)


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.slow
def test_any_order_split_and_merge_equals_evaluate_on_the_concatenation(workload,
                                                                         convention):
    truth, topk = workload
    rng = np.random.default_rng(1)
    order = rng.permutation(3000)
    cuts = np.sort(rng.choice(np.arange(1, 3000), size=6, replace=False))
    parts = np.split(order, cuts)
    evaluators = []
    for part in parts:
        ev = fr.Evaluator(truth, ALL_METRICS, convention=convention)
        evaluators.append(ev.update(part, topk[part]))
    merged = evaluators[0]
    for ev in evaluators[1:]:
        merged.merge(ev)
    want = fr.evaluate(truth, topk[order], ALL_METRICS, convention=convention, users=order)
    assert_same(merged.result(), want)
    # the same users in sorted order: identical per-user values, means to 1e-12
    sorted_want = fr.evaluate(truth, topk, ALL_METRICS, convention=convention)
    for name in ALL_METRICS:
        assert merged.result()[name] == pytest.approx(sorted_want[name], rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(cases(), st.data())
@pytest.mark.slow
def test_random_blocks_equal_evaluate(case, data):
    truth, topk, users = case
    rows = np.arange(truth.shape[0]) if users is None else users
    convention = data.draw(st.sampled_from(CONVENTIONS))
    metrics = data.draw(metric_lists(topk.shape[1], convention))
    cuts = sorted(data.draw(st.lists(st.integers(0, topk.shape[0]), max_size=3)))
    ev = fr.Evaluator(truth, metrics, convention=convention, repeats=True)
    for part in np.split(np.arange(topk.shape[0]), cuts):
        if part.size or ev.k is None:
            ev.update(rows[part], topk[part])
    want = fr.evaluate(truth, topk, metrics, convention=convention, users=rows)
    assert_same(ev.result(), want)


def test_beyond_accuracy_and_catalogue_measures_across_blocks(workload):
    truth, topk = workload
    train, _ = power_law(3000, 400, 5, seed=9)
    aspects = sp.random_array((400, 7), density=0.3, format="csr", rng=np.random.default_rng(2))
    aspects.data[:] = 1
    metrics = ["coverage@5", "gini", "entropy@3", "novelty@10", "arp", "ild@5", "serendipity",
               "ndcg@10"]
    options = dict(train=train, item_aspects=aspects, baseline="popular")
    want = fr.evaluate(truth, topk, metrics, **options)
    ev = fr.Evaluator(truth, metrics, **options)
    for part in np.array_split(np.random.default_rng(4).permutation(3000), 5):
        ev.update(np.sort(part), topk[np.sort(part)])
    got = ev.result()
    assert got.catalogue == ("coverage@5", "gini", "entropy@3")
    for name in metrics:
        assert got[name] == pytest.approx(want[name], rel=1e-12)
    order = got.users
    for name in metrics[3:]:
        np.testing.assert_array_equal(got.per_user(name), want.per_user(name)[order])


def test_per_row_baseline_goes_with_its_block(workload):
    truth, topk = workload
    baseline = np.roll(topk, 1, axis=0)
    want = fr.evaluate(truth, topk, ["serendipity@10"], baseline=baseline)
    ev = fr.Evaluator(truth, ["serendipity@10"])
    for lo in range(0, 3000, 1000):
        ev.update(np.arange(lo, lo + 1000), topk[lo:lo + 1000],
                  baseline=baseline[lo:lo + 1000])
    assert_same(ev.result(), want)


def test_repeated_users_are_an_error_unless_intended(workload):
    truth, topk = workload
    ev = fr.Evaluator(truth, ["ndcg@10"])
    ev.update(np.arange(10), topk[:10])
    with pytest.raises(ValueError, match="truth row 3 is evaluated more than once"):
        ev.update(np.array([20, 3]), topk[:2])
    with pytest.raises(ValueError, match="truth row 30 is evaluated more than once"):
        ev.update(np.array([30, 31, 30]), topk[:3])
    other = fr.Evaluator(truth, ["ndcg@10"]).update(np.array([5]), topk[5:6])
    with pytest.raises(ValueError, match="repeats=True"):
        ev.merge(other)
    ev = fr.Evaluator(truth, ["ndcg@10"], repeats=True)
    ev.update(np.arange(10), topk[:10]).update(np.arange(5), topk[:5])
    rows = np.concatenate([np.arange(10), np.arange(5)])
    assert_same(ev.result(), fr.evaluate(truth, topk[rows], ["ndcg@10"], users=rows))


def test_merging_different_evaluations_is_an_error(workload):
    truth, topk = workload
    ev = fr.Evaluator(truth, ["ndcg@10"]).update(np.arange(5), topk[:5])
    block = (np.arange(5, 10), topk[5:10])
    with pytest.raises(ValueError, match="metrics or convention differ"):
        ev.merge(fr.Evaluator(truth, ["map@10"]).update(*block))
    with pytest.raises(ValueError, match="metrics or convention differ"):
        ev.merge(fr.Evaluator(truth, ["ndcg@10"], convention="trec").update(*block))
    both = fr.Evaluator(truth, ["ndcg@10", "map@10"]).update(np.arange(5), topk[:5])
    with pytest.raises(ValueError, match="same metrics in another order"):
        both.merge(fr.Evaluator(truth, ["map@10", "ndcg@10"]).update(*block))
    with pytest.raises(ValueError, match="metrics or convention differ"):  # not only order
        both.merge(fr.Evaluator(truth, ["map@10", "ndcg@10"], convention="trec").update(*block))
    with pytest.raises(ValueError, match="different truth matrices"):
        ev.merge(fr.Evaluator(truth[:, :399], ["ndcg@10"]).update(*block))
    with pytest.raises(ValueError, match="list lengths differ"):
        ev.merge(fr.Evaluator(truth, ["ndcg@10"], k=12).update(*block))
    with pytest.raises(ValueError, match="allows repeated users"):
        ev.merge(fr.Evaluator(truth, ["ndcg@10"], repeats=True).update(*block))
    with pytest.raises(TypeError, match="merge takes another fr.Evaluator"):
        ev.merge(fr.evaluate(truth, topk, ["ndcg@10"]))
    assert ev.merge(fr.Evaluator(truth, ["ndcg@10"])).n_rows == 5  # empty: nothing to add


def test_list_length_narrower_blocks_and_errors(workload):
    truth, topk = workload
    ev = fr.Evaluator(truth, ["ndcg", "precision@3"], k=12)
    ev.update(np.arange(100), topk[:100])  # 10 columns, padded to 12
    want = fr.evaluate(truth[:100], np.pad(topk[:100], ((0, 0), (0, 2)), constant_values=-1),
                       ["ndcg", "precision@3"])
    np.testing.assert_array_equal(ev.result().per_user("ndcg"), want.per_user("ndcg"))
    with pytest.raises(ValueError, match="topk has 13 columns but this Evaluator's lists have"):
        ev.update(np.arange(100, 101), np.zeros((1, 13), np.int64))
    with pytest.raises(ValueError, match="no block has been added yet"):
        fr.Evaluator(truth, ["ndcg@10"]).result()
    with pytest.raises(ValueError, match="k must be at least 1"):
        fr.Evaluator(truth, ["ndcg@10"], k=0)
    with pytest.raises(ValueError, match="unknown metric"):
        fr.Evaluator(truth, ["nope"], k=5)
    with pytest.raises(ValueError, match="convention must be one of"):
        fr.Evaluator(truth, ["ndcg@10"], convention="x")
    with pytest.raises(ValueError, match=r"users contains 5000, outside \[0, 3000\)"):
        fr.Evaluator(truth, ["ndcg@10"]).update(np.array([5000]), topk[:1])


def test_more_blocks_after_a_result_and_growth_past_the_truth_rows(workload):
    truth, topk = workload
    ev = fr.Evaluator(truth, ["mrr@10"], repeats=True)
    first = ev.update(np.arange(3000), topk).result()
    ev.update(np.arange(3000), topk).update(np.arange(50), topk[:50])  # grows its storage
    rows = np.concatenate([np.arange(3000), np.arange(3000), np.arange(50)])
    assert_same(ev.result(), fr.evaluate(truth, topk[rows], ["mrr@10"], users=rows))
    assert first.per_user("mrr@10").shape == (3000,)  # the earlier Result is untouched
    assert not first.per_user("mrr@10").flags.writeable


def test_threads_do_not_change_anything(workload):
    import numba

    truth, topk = workload
    results = []
    for n in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        ev = fr.Evaluator(truth, ALL_METRICS, n_threads=n)
        results.append(ev.update(np.arange(1500), topk[:1500])
                       .update(np.arange(1500, 3000), topk[1500:]).result())
    assert_same(results[0], results[-1])


def test_memory_mapped_inputs_are_read_in_place(tmp_path, workload):
    truth, topk = workload
    truth = sp.csr_array((truth.data, truth.indices.astype(np.int64),
                          truth.indptr.astype(np.int64)), shape=truth.shape)
    for name, array in (("indptr", truth.indptr), ("indices", truth.indices),
                        ("data", truth.data), ("topk", topk.astype(np.int64))):
        np.save(tmp_path / f"{name}.npy", array)
    load = {name: np.load(tmp_path / f"{name}.npy", mmap_mode="r")
            for name in ("indptr", "indices", "data", "topk")}
    mapped = sp.csr_array((load["data"], load["indices"], load["indptr"]), shape=truth.shape)
    ev = fr.Evaluator(mapped, ["ndcg@10", "recall@5"])
    for name in ("indptr", "indices", "data"):
        assert np.shares_memory(getattr(ev._data, name), load[name])
    for lo in range(0, 3000, 1000):
        ev.update(np.arange(lo, lo + 1000), load["topk"][lo:lo + 1000])
    assert_same(ev.result(), fr.evaluate(truth, topk, ["ndcg@10", "recall@5"]))
    assert not load["topk"].flags.writeable  # read-only maps are fine


@pytest.mark.slow
def test_evaluate_with_progress_is_the_same(workload, capsys):
    truth, topk = workload
    big = sp.vstack([truth] * 50, format="csr")
    lists = np.vstack([topk] * 50)  # 150,000 rows: two spans
    want = fr.evaluate(big, lists, ALL_METRICS + ["coverage@10"])
    got = fr.evaluate(big, lists, ALL_METRICS + ["coverage@10"], show_progress=True)
    assert_same(got, want)
    assert "users/s" in capsys.readouterr().err
    ev = fr.Evaluator(truth, ["ndcg@10"], show_progress=True)
    ev.update(None, topk).result()
    assert "3.00k/3.00k" in capsys.readouterr().err


@pytest.mark.parametrize("metrics, side, match", [
    (["recall_ips@2"], dict(propensity=np.zeros(4)), "propensity contains 0.0"),
    (["recall_ips@2"], dict(propensity=np.ones(3)), "propensity must be 1-D with one value"),
    (["recall_ips(gamma=1)@2"], dict(propensity=np.ones(4), train=sp.csr_array(np.eye(4))),
     "gamma= is the exponent of propensities estimated from train="),
    (["novelty@2"], dict(train=sp.csr_array(np.ones((4, 3)))), "train has 3 columns"),
    (["ndcg@2", "novelty"], dict(train=sp.csr_array(np.ones((2, 5)))), "train has 5 columns"),
])
def test_side_inputs_are_checked_when_the_evaluator_is_built(metrics, side, match):
    """Without k=, the side inputs' contents are refused by the constructor, as with k=,
    not at the first block."""
    truth = sp.csr_array(np.eye(4))
    for k in (None, 2):
        with pytest.raises(ValueError, match=match):
            fr.Evaluator(truth, metrics, k=k, **side)


def test_lists_longer_than_the_largest_cutoff_get_a_plan_of_their_length():
    truth = sp.csr_array(np.eye(4))
    topk = np.array([[0, 1, 2], [1, 2, 3], [2, 3, 0], [3, 0, 1]])
    ev = fr.Evaluator(truth, ["ndcg@2", "map"], train=truth)
    assert ev.k is None
    res = ev.update(None, topk).result()
    assert ev.k == 3
    want = fr.evaluate(truth, topk, ["ndcg@2", "map"])
    assert res["map"] == want["map"] and res["ndcg@2"] == want["ndcg@2"]


def test_a_block_that_failed_can_be_passed_again():
    """A block refused in its evaluation (here its baseline) leaves its users unseen: the
    corrected block is not 'evaluated more than once'."""
    truth = sp.csr_array(np.array([[1.0, 0, 2], [0, 1, 0], [1, 1, 1]]))
    ev = fr.Evaluator(truth, ["ndcg@2", "serendipity@2"], k=2)
    lists = np.array([[0, 1], [2, 1]])
    with pytest.raises(ValueError, match="baseline contains item id 9"):
        ev.update([0, 1], lists, baseline=np.array([[0, 9], [1, 2]]))
    ev.update([0, 1], lists, baseline=np.array([[0, 1], [1, 2]]))
    with pytest.raises(ValueError, match="truth row 1 is evaluated more than once"):
        ev.update([1], lists[:1], baseline=np.array([[0, 1]]))
    other = fr.Evaluator(truth, ["ndcg@2", "serendipity@2"], k=2)
    other.update([2], lists[:1], baseline=np.array([[0, 1]]))
    ev.merge(other)
    with pytest.raises(ValueError, match="truth row 2 is evaluated more than once"):
        ev.update([2], lists[:1], baseline=np.array([[0, 1]]))


def test_a_refused_first_block_leaves_k_open_and_an_empty_merge_checks_k():
    truth, topk = power_law(60, 40, 10, seed=3)
    ev = fr.Evaluator(truth, ["ndcg", "recall@3"])
    with pytest.raises(ValueError, match="repeat"):
        ev.update(np.array([0, 0, 1]), topk[:3, :5])  # a repeated user, lists of 5
    assert ev.k is None
    ev.update(None, topk)  # lists of 10: K is set by the first block that goes in
    assert_same(ev.result(), fr.evaluate(truth, topk, ["ndcg", "recall@3"]))
    other = fr.Evaluator(truth, ["ndcg", "recall@3"], k=12)  # no rows, K = 12
    with pytest.raises(ValueError, match="list lengths differ \\(K = 10 here, 12 there\\)"):
        ev.merge(other)


def test_the_baseline_is_checked_when_the_evaluator_is_built():
    """As the other side inputs: a bad baseline is named when the Evaluator is built, not
    at the first block; and a per-row baseline there (which each block would read from its
    own first row, silently, whenever a block has as many rows) is refused: per-row lists
    go with their block."""
    truth, topk = power_law(20, 10, 4, seed=5)
    train = sp.csr_array(np.eye(20, 10))
    for baseline, match in (("pop", "must be 'popular'"), (np.array([1.5]), "integer item"),
                            (np.array([0, 10]), "item id 10"),
                            (np.roll(topk, 1, axis=0)[:, :3], "update\\(users, topk, "
                                                              "baseline=rows\\)")):
        for k in (None, 4):
            with pytest.raises((ValueError, TypeError), match=match):
                fr.Evaluator(truth, ["serendipity@4", "ndcg"], k=k, baseline=baseline)
    with pytest.raises(ValueError, match="needs train="):
        fr.Evaluator(truth, ["serendipity@4"], baseline="popular")
    shared = np.array([[3, 1, -1]])  # one list (one row) for every row: as before
    ev = fr.Evaluator(truth, ["serendipity@4"], baseline=shared)
    ev.update(np.arange(10), topk[:10]).update(np.arange(10, 20), topk[10:])
    assert_same(ev.result(), fr.evaluate(truth, topk, ["serendipity@4"], baseline=shared))
    ev = fr.Evaluator(truth, ["serendipity@4"], baseline="popular", train=train)
    ev.update(None, topk)
    assert_same(ev.result(), fr.evaluate(truth, topk, ["serendipity@4"], baseline="popular",
                                         train=train))


def test_an_evaluator_with_a_progress_bar_pickles_mid_stream():
    """Partial evaluations travel between processes pickled: the bar (a terminal's stream)
    stays behind, and the next block starts a new one."""
    import pickle

    truth, topk = power_law(200, 30, 5, seed=6)
    ev = fr.Evaluator(truth, ["ndcg", "coverage"], show_progress=True)
    ev.update(np.arange(100), topk[:100])
    copy = pickle.loads(pickle.dumps(ev))
    copy.update(np.arange(100, 200), topk[100:])
    assert_same(copy.result(), fr.evaluate(truth, topk, ["ndcg", "coverage"]))
    ev.update(np.arange(100, 200), topk[100:])  # the original keeps its bar
    assert_same(ev.result(), copy.result())
