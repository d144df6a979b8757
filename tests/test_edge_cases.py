"""Edge cases from STYLE.md: empty rows, m < k, k = 1, padding, duplicates, dtypes, threads."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastrank as fr

from .conftest import ALL_METRICS, csr
from .test_reference import assert_matches_reference


def test_empty_truth_row_is_not_counted_in_recsys_and_implicit():
    truth = csr([{0: 1.0}, {}], 3)
    topk = np.array([[0, 1], [1, 2]])
    for convention in ("recsys", "implicit"):
        res = fr.evaluate(truth, topk, ["ndcg@2", "precision@2"], convention=convention)
        assert np.isnan(res.per_user("ndcg@2")[1])
        assert res.n_users == 1
        assert res["ndcg@2"] == 1.0


def test_trec_counts_judged_rows_with_no_relevant_item_as_zero():
    truth = csr([{0: 1.0}, {1: 0.0}, {}], 3)
    topk = np.array([[0, 1], [1, 2], [0, 1]])
    res = fr.evaluate(truth, topk, ["ndcg@2", "map", "recall@2", "auc@2"], convention="trec")
    assert res.counted.tolist() == [True, True, False]
    for name in res:
        assert res.per_user(name)[1] == 0.0
        assert np.isnan(res.per_user(name)[2])
    assert res["ndcg@2"] == 0.5
    # recsys leaves the judged-but-irrelevant row out
    assert fr.evaluate(truth, topk, "ndcg@2").n_users == 1


def test_all_relevant_row_has_auc_one_and_perfect_scores():
    truth = csr([{0: 1.0, 1: 1.0, 2: 1.0}], 3)
    res = fr.evaluate(truth, np.array([[2, 0, 1]]), ["auc", "ndcg", "precision", "map"])
    assert res.to_dict() == {"auc": 1.0, "ndcg": 1.0, "precision": 1.0, "map": 1.0}


def test_fewer_relevant_items_than_k():
    truth = csr([{3: 1.0}], 5)
    res = fr.evaluate(truth, np.array([[0, 3, 1, 2]]),
                      ["precision@4", "recall@4", "map@4", "mar@4", "r_precision"])
    assert res["precision@4"] == 0.25
    assert res["recall@4"] == 1.0
    assert res["map@4"] == 0.5 and res["mar@4"] == 0.5
    assert res["r_precision"] == 0.0
    imp = fr.evaluate(truth, np.array([[0, 3, 1, 2]]), ["precision@4"], convention="implicit")
    assert imp["precision@4"] == 1.0  # hits / min(k, m)


def test_k_equal_one():
    truth = csr([{0: 2.0}, {1: 1.0}], 2)
    res = fr.evaluate(truth, np.array([[0], [0]]), ["precision@1", "ndcg@1", "mrr@1", "auc@1"])
    assert_array_equal(res.per_user("precision@1"), [1.0, 0.0])
    assert_array_equal(res.per_user("ndcg@1"), [1.0, 0.0])
    assert_array_equal(res.per_user("auc@1"), [1.0, 0.0])


def test_padding_is_never_a_hit_and_is_skipped_by_auc():
    truth = csr([{0: 1.0, 1: 1.0}], 6)
    padded = fr.evaluate(truth, np.array([[-1, 0, -1, -1]]), ["precision@4", "auc@4", "mrr"])
    assert padded["precision@4"] == 0.25
    assert padded["mrr"] == 0.5
    # auc skips padding: same as the list [0] alone
    alone = fr.evaluate(truth, np.array([[0]]), ["auc@1"])
    assert padded["auc@4"] == alone["auc@1"]
    empty = fr.evaluate(truth, np.full((1, 3), -1), ["precision", "ndcg", "auc"])
    assert empty["precision"] == 0.0 and empty["ndcg"] == 0.0
    assert empty["auc"] == 0.5  # no hits, nothing ranked: every negative ties at the middle


def test_duplicate_ids_in_a_list_count_once():
    truth = csr([{0: 1.0, 1: 1.0}], 5)
    dup = fr.evaluate(truth, np.array([[0, 0, 2, 2]]), ["precision@4", "ndcg@4", "auc@4"])
    assert dup["precision@4"] == 0.25
    # auc skips repeats: the same as the list [0, 2]
    assert dup["auc@4"] == fr.evaluate(truth, np.array([[0, 2]]), ["auc@2"])["auc@2"]
    assert_matches_reference(truth, np.array([[0, 0, 2, 2]]), ["precision@4", "ndcg@4", "auc@4"],
                             "recsys")


def test_unsorted_and_duplicated_csr_is_canonicalised_without_touching_the_caller():
    indptr = np.array([0, 3], dtype=np.int32)
    indices = np.array([2, 0, 2], dtype=np.int32)  # unsorted, item 2 stored twice
    data = np.array([1.0, 1.0, 1.0])
    truth = sp.csr_matrix((data, indices, indptr), shape=(1, 4))
    before = (truth.indices.copy(), truth.data.copy(), truth.indptr.copy())
    res = fr.evaluate(truth, np.array([[2, 1, 0]]), ["ndcg@3", "dcg@3", "recall@3"])
    assert res.n_relevant.tolist() == [2]
    assert res["dcg@3"] == pytest.approx(2.0 + 1.0 / np.log2(4), rel=1e-15)  # 1 + 1 summed at 2
    assert res["recall@3"] == 1.0
    assert_array_equal(truth.indices, before[0])
    assert_array_equal(truth.data, before[1])
    assert_array_equal(truth.indptr, before[2])


@pytest.mark.parametrize("fmt", ["coo", "csc", "lil", "dok"])
def test_other_sparse_formats_give_the_same_result(fmt):
    rng = np.random.default_rng(1)
    dense = (rng.random((20, 15)) < 0.3) * rng.integers(1, 4, (20, 15))
    topk = rng.integers(-1, 15, (20, 5))
    base = fr.evaluate(sp.csr_array(dense), topk, ALL_METRICS).to_dict()
    assert fr.evaluate(sp.csr_array(dense).asformat(fmt), topk, ALL_METRICS).to_dict() == base


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64, np.int16, np.uint32])
@pytest.mark.slow
def test_integer_dtypes_agree(index_dtype, id_dtype):
    rng = np.random.default_rng(2)
    dense = (rng.random((30, 40)) < 0.2) * rng.integers(1, 4, (30, 40))
    topk = rng.integers(0, 40, (30, 6))
    base = fr.evaluate(sp.csr_array(dense), topk.astype(np.int64), ALL_METRICS)
    truth = sp.csr_array(dense)
    truth.indices = truth.indices.astype(index_dtype)
    truth.indptr = truth.indptr.astype(index_dtype)
    res = fr.evaluate(truth, topk.astype(id_dtype), ALL_METRICS)
    for name in ALL_METRICS:
        assert_array_equal(res.per_user(name), base.per_user(name))


def test_read_only_and_memory_mapped_inputs(tmp_path):
    rng = np.random.default_rng(3)
    dense = (rng.random((25, 30)) < 0.2) * rng.integers(1, 4, (25, 30))
    truth = sp.csr_array(dense)
    topk = rng.integers(-1, 30, (25, 5))
    base = fr.evaluate(truth, topk, ALL_METRICS).to_dict()
    for arr in (truth.indptr, truth.indices, truth.data):
        arr.flags.writeable = False
    ro = topk.copy()
    ro.flags.writeable = False
    assert fr.evaluate(truth, ro, ALL_METRICS).to_dict() == base
    np.save(tmp_path / "topk.npy", topk)
    mapped = np.load(tmp_path / "topk.npy", mmap_mode="r")
    assert fr.evaluate(truth, mapped, ALL_METRICS).to_dict() == base


def test_inputs_are_never_modified():
    rng = np.random.default_rng(4)
    dense = (rng.random((40, 30)) < 0.2) * rng.integers(-1, 4, (40, 30))
    truth = sp.coo_array(dense)
    truth = sp.csr_matrix((truth.data.astype(np.int64), (truth.row, truth.col)), shape=dense.shape)
    topk = rng.integers(-1, 30, (40, 7)).astype(np.int32)
    users = rng.permutation(40)
    copies = [a.copy() for a in (truth.indptr, truth.indices, truth.data, topk, users)]
    for convention in fr.CONVENTIONS:
        fr.evaluate(truth, topk, ALL_METRICS, convention=convention, users=users)
    for before, after in zip(copies, (truth.indptr, truth.indices, truth.data, topk, users)):
        assert_array_equal(before, after)
        assert before.dtype == after.dtype


def test_users_maps_rows_including_repeats():
    rng = np.random.default_rng(5)
    dense = (rng.random((10, 20)) < 0.3) * 1.0
    truth = sp.csr_array(dense)
    topk = rng.integers(0, 20, (10, 4))
    full = fr.evaluate(truth, topk, ALL_METRICS)
    users = np.array([3, 3, 7, 0])
    res = fr.evaluate(truth, topk[users], ALL_METRICS, users=users)
    for name in ALL_METRICS:
        assert_array_equal(res.per_user(name), full.per_user(name)[users])
    assert_array_equal(res.users, users)


def test_several_cutoffs_in_one_call_equal_separate_calls():
    rng = np.random.default_rng(6)
    dense = (rng.random((50, 40)) < 0.15) * rng.integers(1, 5, (50, 40))
    truth = sp.csr_array(dense)
    topk = rng.integers(-1, 40, (50, 10))
    labels = [f"{name}@{k}" for name in ("ndcg", "map", "precision", "auc") for k in (1, 3, 10)]
    together = fr.evaluate(truth, topk, labels)
    for label in labels:
        alone = fr.evaluate(truth, topk, [label])
        assert_array_equal(together.per_user(label), alone.per_user(label))


@pytest.mark.parametrize("convention", fr.CONVENTIONS)
@pytest.mark.slow
def test_bit_identical_for_one_and_two_threads(convention):
    rng = np.random.default_rng(7)
    n_users, n_items = 20_000, 500
    nnz = rng.integers(0, 12, n_users)
    rows = np.repeat(np.arange(n_users), nnz)
    cols = rng.integers(0, n_items, rows.shape[0])
    vals = rng.integers(0, 5, rows.shape[0]).astype(np.float64) + rng.random(rows.shape[0])
    truth = sp.csr_array((vals, (rows, cols)), shape=(n_users, n_items))
    topk = rng.integers(-1, n_items, (n_users, 20))
    labels = ALL_METRICS + ["ndcg@20", "map@20", "precision@20"]
    previous = numba.get_num_threads()
    one = fr.evaluate(truth, topk, labels, convention=convention, n_threads=1)
    assert numba.get_num_threads() == previous
    two = fr.evaluate(truth, topk, labels, convention=convention,
                      n_threads=min(2, numba.config.NUMBA_NUM_THREADS))
    assert numba.get_num_threads() == previous
    for name in labels:
        assert_array_equal(one.per_user(name), two.per_user(name))
        assert one[name] == two[name]


def test_no_rows_gives_nan_means():
    truth = csr([{0: 1.0}], 2)
    res = fr.evaluate(truth, np.zeros((0, 3), dtype=np.int64), ["ndcg"], users=np.array([], int))
    assert res.n_users == 0 and np.isnan(res["ndcg"])
    assert res.per_user("ndcg").shape == (0,)


def test_graded_ndcg_uses_values_and_binary_metrics_do_not():
    truth = csr([{0: 1.0, 1: 3.0}], 4)
    res = fr.evaluate(truth, np.array([[0, 1]]), ["ndcg@2", "ndcg_exp@2", "precision@2"])
    ideal = 3.0 + 1.0 / np.log2(3)
    assert_allclose(res["ndcg@2"], (1.0 + 3.0 / np.log2(3)) / ideal, rtol=1e-15)
    ideal_exp = 7.0 + 1.0 / np.log2(3)
    assert_allclose(res["ndcg_exp@2"], (1.0 + 7.0 / np.log2(3)) / ideal_exp, rtol=1e-15)
    assert res["precision@2"] == 1.0
    imp = fr.evaluate(truth, np.array([[0, 1]]), ["ndcg@2"], convention="implicit")
    assert imp["ndcg@2"] == 1.0


def test_trec_ndcg_without_cutoff_takes_the_ideal_over_all_relevant_items():
    truth = csr([{0: 1.0, 1: 1.0, 2: 1.0}], 5)
    topk = np.array([[0, 3]])
    trec = fr.evaluate(truth, topk, ["ndcg", "ndcg@2"], convention="trec")
    assert_allclose(trec["ndcg"], 1.0 / (1 + 1 / np.log2(3) + 0.5), rtol=1e-15)
    assert_allclose(trec["ndcg@2"], 1.0 / (1 + 1 / np.log2(3)), rtol=1e-15)
    assert fr.evaluate(truth, topk, ["ndcg"])["ndcg"] == trec["ndcg@2"]


def test_implicit_precision_mean_is_pooled():
    truth = csr([{0: 1.0}, {0: 1.0, 1: 1.0, 2: 1.0}], 5)
    topk = np.array([[0, 4], [4, 3]])
    res = fr.evaluate(truth, topk, ["precision@2"], convention="implicit")
    assert_array_equal(res.per_user("precision@2"), [1.0, 0.0])
    assert res["precision@2"] == 1 / 3  # (1 + 0) / (min(2, 1) + min(2, 3))


def test_user_ranges_stay_proportional_to_the_work():
    from fastrank.threads import _CHUNKS_PER_THREAD, _STATIC_LAYERS, n_ranges

    fr.evaluate(sp.csr_array(np.eye(2)), np.array([[0], [1]]), ["precision@1"])  # a layer
    # many users: one range per thread where the layer splits a prange evenly up front,
    # a few per thread where it hands them out (TBB)
    per_thread = 1 if numba.threading_layer() in _STATIC_LAYERS else _CHUNKS_PER_THREAD
    assert n_ranges(1_000_000, 2, 14_000_000, 50_000) == 2 * per_thread
    assert n_ranges(50, 2, 50 * 1000 + 5000, 10_000_000) == 2     # huge catalogue: 1 per thread
    assert n_ranges(1, 2, 10, 100) == 1 and n_ranges(0, 2, 0, 100) == 0


def test_few_users_and_a_large_catalogue():
    rng = np.random.default_rng(8)
    n_items = 2_000_000
    truth = sp.csr_array((np.ones(30), (np.repeat(np.arange(3), 10), rng.choice(n_items, 30))),
                         shape=(3, n_items))
    topk = np.vstack([truth.indices[:5], rng.choice(n_items, 5), truth.indices[20:25]])
    res = fr.evaluate(truth, topk, ["precision@5", "recall@5"])
    assert_array_equal(res.per_user("precision@5"), [1.0, 0.0, 1.0])


@pytest.mark.parametrize("judged", [False, True])
def test_the_counts_kernel_writes_what_the_ranking_kernel_writes(judged):
    """A call with no ranking slot (trec_eval's measures only) takes m and the counted rows
    from a small kernel of their own: the same as the ranking kernel's, with empty rows,
    rows of stored zeros and negatives, and lists gathered out of order."""
    from fastrank.ranking_pass import SlotTable, counts_into, rank_into
    from fastrank.threads import numba_threads
    from fastrank.validation import check_truth

    rng = np.random.default_rng(7)
    dense = rng.choice([0.0, 0.0, 0.0, 1.0, 2.0, -1.0], size=(60, 30))
    dense[::7] = 0.0  # empty rows
    truth = sp.csr_array(dense)
    truth.data[::5] = 0.0  # stored zeros: judged, not relevant
    data = check_truth(truth)
    rows = rng.integers(0, 60, 90)
    topk = rng.integers(-1, 30, (90, 4))
    expected_m, got_m = np.empty(90, np.int64), np.empty(90, np.int64)
    expected_c, got_c = np.empty(90, np.uint8), np.empty(90, np.uint8)
    for threads in (1, 2):
        with numba_threads(threads):
            rank_into(data, topk, rows, SlotTable(None, []), judged, threads, np.empty((0, 90)),
                      expected_m, expected_c)
            counts_into(data, rows, judged, threads, got_m, got_c)
        assert_array_equal(got_m, expected_m)
        assert_array_equal(got_c, expected_c)
    assert 0 < expected_c.sum() < 90


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_walk_that_cannot_allocate_its_markers_raises_a_value_error(monkeypatch):
    """The walk runs through its C wrapper, which cannot raise: a failed allocation comes
    back as an unfinished range, and the facade says what ran out (the scratch check that
    normally refuses such a catalogue first is switched off, and the limit of the stamps'
    offsets, 2^32 items, lifted)."""
    passes = __import__("fastrank.ranking_pass", fromlist=["check_scratch"])
    monkeypatch.setattr(passes, "check_scratch", lambda *args, **kwargs: None)
    from fastrank._kernels import ranking
    monkeypatch.setattr(ranking, "MOST_ITEMS", 2 ** 62)
    truth = sp.csr_array((np.ones(2), (np.array([0, 1]), np.array([0, 5]))), shape=(2, 2 ** 42))
    with pytest.raises(ValueError, match="ranking kernel ran out of memory"):
        fr.evaluate(truth, np.array([[0, 1], [5, 0]]), ["ndcg@2"], n_threads=1)


def _ranking_walks(monkeypatch):
    """A list that receives the constants of every ranking walk `frames.walk` is asked
    for from now on: (params, sorting, the five dtypes, memo, extended)."""
    from fastrank._kernels import frames

    built = []
    walk = frames.walk

    def spy(factory, *constants):
        if factory.__name__ == "rank_rows":
            built.append(constants)
        return walk(factory, *constants)

    monkeypatch.setattr(frames, "walk", spy)
    return built


def test_grades_that_need_a_sort_after_the_first_values_still_rank_right(monkeypatch):
    """The ranking walk that counts whole grades is tried first when the first 65,536
    values suggest them; a later fractional grade, or one past 15, sends the call to the
    walk that sorts, on fresh scratch, with the reference's values."""
    from fastrank._kernels import frames

    rng = np.random.default_rng(11)
    n_users, n_items = 14000, 200
    rows, cols = np.nonzero(rng.random((n_users, n_items)) < 6 / n_items)
    values = rng.integers(1, 4, rows.size).astype(np.float64)
    values[rows >= 12000] += 0.5
    values[rows >= 13000] = 16.0 + rows[rows >= 13000] % 5
    truth = sp.csr_array((values, (rows, cols)), shape=(n_users, n_items))
    assert truth.data[:1 << 16].max() < 4 and (truth.data[:1 << 16] % 1 == 0).all()
    topk = rng.integers(-1, n_items, (n_users, 10))
    metrics = ["ndcg@10", "ndcg_exp@5", "map@10", "nerr@10"]
    monkeypatch.setattr(frames, "_walks", {})  # as in a fresh process
    walked = _ranking_walks(monkeypatch)
    res = fr.evaluate(truth, topk, metrics)
    params_sorting = [constants[:2] for constants in walked]
    assert (True, False) in params_sorting and (True, True) in params_sorting
    # the walk with the sort is used from then on: same values, the reference's
    walked.clear()
    again = fr.evaluate(truth, topk, metrics)
    assert (True, False) not in [constants[:2] for constants in walked]
    for m in metrics:
        assert_array_equal(again.per_user(m), res.per_user(m))
    assert_matches_reference(truth, topk, metrics, "recsys")


def test_rows_without_a_hit_take_no_ideal_and_score_zero(monkeypatch):
    """The graded ideal is found only for rows with a hit: a row of fractional grades
    (which needs the sort) and no hit does not send the call to the walk that sorts,
    and rows without a hit right after rows with one (whose ideals the block keeps)
    score exactly +0.0, as the reference does, in both conventions."""
    rng = np.random.default_rng(5)
    n_users, n_items = 14000, 300
    rows, cols = np.nonzero(rng.random((n_users, n_items)) < 6 / n_items)
    values = rng.integers(1, 4, rows.size).astype(np.float64)
    late = rows >= 12000
    values[late] += 0.25 + rows[late] % 7  # fractional grades, up to 10.25
    truth = sp.csr_array((values, (rows, cols)), shape=(n_users, n_items))
    assert (truth.data[:1 << 16] % 1 == 0).all()  # the walk without the sort goes first
    topk = rng.integers(-1, n_items, (n_users, 10))
    dense = truth.toarray() > 0
    for u in range(12000, n_users):  # the late rows: no relevant item in their lists
        topk[u] = rng.choice(np.flatnonzero(~dense[u]), 10, replace=False)
    metrics = ["ndcg@10", "ndcg@3", "ndcg_exp@5", "nerr@10", "dcg@10"]
    from fastrank._kernels import frames

    monkeypatch.setattr(frames, "_walks", {})  # as in a fresh process: none compiled yet
    walked = _ranking_walks(monkeypatch)
    for convention in ("recsys", "trec"):
        res = fr.evaluate(truth, topk, metrics, convention=convention)
        assert not any(constants[1] for constants in walked)  # never the sorting walk
        hit = (dense[np.arange(n_users)[:, None], np.maximum(topk, 0)] & (topk >= 0)).any(1)
        assert hit[:12000].any() and not hit[12000:].any()
        for m in metrics:
            values = res.per_user(m)[~hit & res.counted]
            assert (values == 0.0).all() and not np.signbit(values).any()
        assert_matches_reference(truth, topk, metrics, convention)


@pytest.mark.parametrize("entries", [None, 16])
def test_memo_of_graded_ideals_gives_the_walks_values(monkeypatch, entries):
    """Rows of up to 15 whole grades up to 15 take their ideal from a memo keyed by the
    count of each grade: the same values to the bit as the walk without it, and the
    reference's, for rows longer than the largest cutoff, rows past the memo's 15 values,
    an uncut ideal (trec's ndcg), exponential gains and nERR's ideal; with a memo of 16
    entries (entries=16) most keys collide. The walk with the memo (of large calls) also
    has loops of their own for the slots of precision, MAP and nDCG: the same values."""
    from fastrank._kernels import ranking

    rng = np.random.default_rng(23)
    n_users, n_items = 1500, 2000
    per = np.where(rng.random(n_users) < 0.02, 400, rng.integers(0, 30, n_users))
    rows = np.repeat(np.arange(n_users), per)
    cols = rng.integers(0, n_items, rows.size)
    truth = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n_users, n_items))
    truth.sum_duplicates()
    top = np.where(rng.random(n_users) < 0.5, 3, 15)[np.repeat(np.arange(n_users),
                                                                 np.diff(truth.indptr))]
    truth.data = rng.integers(0, top + 1).astype(np.float64)  # 0: stored, not relevant
    topk = rng.integers(-1, n_items, (n_users, 12))
    hit = rng.random(topk.shape) < 0.4
    u, p = np.nonzero(hit & (np.diff(truth.indptr) > 0)[:, None])
    topk[u, p] = truth.indices[truth.indptr[u] + rng.integers(0, 1 << 20, u.size)
                               % np.diff(truth.indptr)[u]]
    walked = _ranking_walks(monkeypatch)

    def memo():  # the memo constant of each ranking walk asked for
        return [constants[7] for constants in walked]

    cases = [(["ndcg@1", "ndcg@3", "ndcg@10", "ndcg_exp@5", "nerr@10", "map@10", "precision@3",
               "auc@12"], "recsys"),
             (["ndcg", "ndcg@5"], "trec")]
    fr.evaluate(truth, topk, cases[0][0])
    assert memo() == [False]  # a small call: the walk without the memo
    monkeypatch.setattr(ranking, "MEMO_ROWS", 1)  # the memo's walk for a small call too
    if entries is not None:
        monkeypatch.setattr(ranking, "_MEMO_MOST", entries)
    walked.clear()
    with_memo = {c: fr.evaluate(truth, topk, m, convention=c) for m, c in cases}
    assert memo() == [True, True]
    monkeypatch.setattr(ranking, "_MEMO_LEAST", 1 << 30)  # no memo
    assert ranking.memo_entries(3, 6, True) == 0
    walked.clear()
    for metrics, convention in cases:
        plain = fr.evaluate(truth, topk, metrics, convention=convention)
        for m in metrics:
            assert_array_equal(with_memo[convention].per_user(m), plain.per_user(m))
        assert_matches_reference(truth, topk, metrics, convention)
    assert memo() and not any(memo())  # no memo: the walk without it


@pytest.mark.parametrize("memo", [False, True])
def test_the_walk_of_the_core_codes_gives_the_full_walk_s_values(monkeypatch, memo):
    """A call of the core codes alone (codes.CORE: precision, recall, F1, hit rate, MRR,
    MAP, nDCG, AUC, in each convention) runs a walk compiled without the other codes'
    sums and slots; one other code in the call runs the full walk. The core codes' values
    are the same to the bit either way, with whole and fractional grades, padding and
    repeats, in the walk of small calls and in the memo's; the other codes match the
    reference."""
    from fastrank._kernels import ranking

    rng = np.random.default_rng(31)
    n_users, n_items = 900, 300
    dense = np.where(rng.random((n_users, n_items)) < 0.04, rng.integers(0, 6, (n_users, n_items)),
                     0).astype(np.float64)
    dense[::7] *= 0.75  # fractional grades: the walk that sorts
    dense[5] = 0.0
    truth = sp.csr_array(dense)
    topk = rng.integers(-1, n_items, (n_users, 12))
    topk[::5, 3] = topk[::5, 1]  # repeats
    if memo:
        monkeypatch.setattr(ranking, "MEMO_ROWS", 1)
    walked = _ranking_walks(monkeypatch)
    core = ["precision@3", "recall@5", "f1@5", "hit_rate@5", "mrr@10", "map@10", "ndcg@3",
            "ndcg@10", "auc@12"]
    others = {"recsys": ["ndcg_exp@5", "r_precision", "dcg@4", "cg@3", "hits@3",
                         "f_beta(beta=2)@5", "dcg_exp@3", "judged@5"],
              "implicit": ["ndcg_exp@5"], "trec": ["ndcg", "num_ret@5", "num_rel"]}
    for convention in ("recsys", "implicit", "trec"):
        names = [m for m in core if convention != "implicit" or m[:3] in ("pre", "map", "ndc",
                                                                           "auc")]
        extra = others[convention]
        walked.clear()
        alone = fr.evaluate(truth, topk, names, convention=convention)
        assert {constants[-1] for constants in walked} == {False}
        walked.clear()
        both = fr.evaluate(truth, topk, names + extra, convention=convention)
        assert {constants[-1] for constants in walked} == {True}
        assert walked[0][7] == memo  # the pass of the truth as given (one with nDCG)
        for m in names:
            assert_array_equal(alone.per_user(m), both.per_user(m))
        assert_matches_reference(truth, topk, names + extra, convention)


def test_bsr_and_dia_truth_have_no_stored_zeros():
    """A BSR block stores its zeros, which nobody judged, and scipy's DIA conversion drops
    stored zeros: both mean the CSR of their nonzero entries, under trec (where a stored
    zero is a judgment) and for rmse (where it is a rating), not the blocks' padding."""
    rng = np.random.default_rng(3)
    dense = (rng.random((12, 10)) < 0.3) * rng.integers(1, 4, (12, 10)).astype(float)
    topk = np.argsort(-rng.random((12, 10)), axis=1)[:, :4]
    plain = sp.csr_array(dense)
    for truth in (sp.bsr_array(dense, blocksize=(2, 2)), sp.bsr_matrix(dense, blocksize=(3, 5)),
                  sp.dia_array(dense)):
        for convention in ("trec", "recsys"):
            want = fr.evaluate(plain, topk, ["ndcg@4", "precision@4"], convention=convention)
            got = fr.evaluate(truth, topk, ["ndcg@4", "precision@4"], convention=convention)
            assert_array_equal(got.per_user("ndcg@4"), want.per_user("ndcg@4"))
            assert got.n_users == want.n_users
        assert fr.rmse(truth, dense + 0.5)["rmse"] == fr.rmse(plain, dense + 0.5)["rmse"]
    assert sp.bsr_array(dense, blocksize=(2, 2)).nnz > plain.nnz  # the check can fail
    with pytest.raises(TypeError, match="truth is a BSR matrix, whose stored values have no "
                                        "such order"):
        fr.rmse(sp.bsr_array(dense, blocksize=(2, 2)), np.ones(plain.nnz))


def test_ids_past_int64_and_sparse_lists_are_named_as_given():
    truth = sp.csr_array(np.array([[1.0, 0, 2], [0, 1, 0]]))
    lists = np.array([[0, 1], [2, 1]])
    with pytest.raises(ValueError, match="topk contains item id 9223372036854775810,"):
        fr.evaluate(truth, lists.astype(np.uint64) + np.uint64(2**63), ["ndcg@2"])
    with pytest.raises(ValueError, match="users contains 9223372036854775813, outside"):
        fr.evaluate(truth, lists, ["ndcg@2"], users=np.array([2**63 + 5, 0], np.uint64))
    with pytest.raises(TypeError, match="topk must be a dense integer array .* got a "
                                        "scipy.sparse CSR matrix"):
        fr.evaluate(truth, sp.csr_array(lists), ["ndcg@2"])


def test_dcg_exp_of_grades_past_1535_and_cutoffs_without_a_hit():
    """A user whose largest grade passes 1535 has its exponential gains scaled by more
    than 2^1023: no hit before k is 0 whatever other cutoffs ask (it was NaN, inf · 0,
    asked with a cutoff that reaches the hit), and a hit of that grade is inf (2^2000)."""
    truth = sp.csr_array(np.array([[2000.0, 0.0, 1.0]]))
    topk = np.array([[1, 0, 2]])
    alone = fr.evaluate(truth, topk, ["dcg_exp@1"])
    both = fr.evaluate(truth, topk, ["dcg_exp@1", "dcg_exp@3"])
    assert alone["dcg_exp@1"] == both["dcg_exp@1"] == 0.0
    assert both["dcg_exp@3"] == np.inf


def test_a_relevance_threshold_reads_float32_grades_as_float64_in_every_metric():
    """float32(0.7) is 0.699999988, below 0.7: not relevant at rel=0.7 for the ranking
    and counting metrics as for the trec kernels (they disagreed in one call)."""
    truth = sp.csr_array(np.array([[0.7, 0.0]], np.float32))
    res = fr.evaluate(truth, np.array([[0, 1]]), ["num_rel(rel=0.7)", "precision(rel=0.7)@1",
                                                 "set_precision(rel=0.7)"], convention="trec")
    assert res.to_dict() == {"num_rel(rel=0.7)": 0.0, "precision(rel=0.7)@1": 0.0,
                             "set_precision(rel=0.7)": 0.0}
    exact = sp.csr_array(np.array([[0.7, 0.0]]))  # float64 0.7 is at the threshold
    assert fr.evaluate(exact, np.array([[0, 1]]), ["precision(rel=0.7)@1"])[
        "precision(rel=0.7)@1"] == 1.0


def test_subnormal_grades_keep_their_digits():
    """Gains so small that times a discount they fall among the subnormal numbers are
    scaled by a power of two, as gains past 2^512 are: the ratio is the formula's."""
    truth = sp.csr_array(np.array([[5e-324, 0.0]]))
    res = fr.evaluate(truth, np.array([[1, 0]]), ["ndcg@2", "dcg@2"])
    assert res["ndcg@2"] == 1 / np.log2(3)  # it was 1.0
    assert res["dcg@2"] == 5e-324 / np.log2(3)


def test_results_pickle_and_stay_read_only():
    """A Result goes to other processes and caches: it pickles (its requests name
    registry entries, whose read-only mappings pickle could not copy) and comes back
    with the same values, read-only arrays and descriptions."""
    import copy
    import pickle

    truth = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, 3, 0, 1], [1, 1, 0, 0]]))
    topk = np.array([[0, 1, 2], [3, -1, 1], [2, 0, 1]])
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1], [0, 1]], np.int8))
    results = [fr.evaluate(truth, topk, ["ndcg@2", "precision(rel=2)@3", "auc@3"]),
               fr.evaluate(truth, topk, ["P_2", "ndcg_cut_3"], convention="trec"),
               fr.evaluate(truth, topk, ["ndcg@2"], per_user=False),
               fr.ab_ndcg(truth, topk, aspects, user_aspects=np.ones((3, 2))),
               fr.rmse(truth, np.ones(6))]
    for res in results:
        for back in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res)):
            assert dict(back) == dict(res)
            for name in res.metrics:
                if res.has_per_user:
                    assert_array_equal(back.per_user(name), res.per_user(name))
                    assert not back.per_user(name).flags.writeable
            if res.users is not None:
                assert not back.users.flags.writeable
            assert back.requests.keys() == res.requests.keys()
