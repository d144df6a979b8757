"""fr.rmse and fr.mae against a plain-Python reference, scikit-learn, edge cases and errors."""

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import mean_absolute_error, mean_squared_error

import fastrank as fr

METRICS = [pytest.param(fr.rmse, "rmse", id="rmse"), pytest.param(fr.mae, "mae", id="mae")]
# how the truth is stored: canonical CSR, CSR with unsorted columns within rows, CSC, and
# COO with its entries in shuffled order
TRUTH_FORMATS = ["csr", "csr-unsorted", "csc", "coo-shuffled"]
# how the predictions are given: sparse in the same four layouts (with extra stored entries),
# 1-D aligned with truth.data, dense 2-D, or factor matrices
PREDICTION_FORMS = ["csr", "csr-unsorted", "csc", "coo-shuffled", "aligned", "dense",
                    "factors64", "factors32"]
MAX_THREADS = numba.config.NUMBA_NUM_THREADS
N_USERS, N_ITEMS = 30, 17
EMPTY_USERS = (3, 11, 29)  # no ratings; 29 is the last row


# ---------------------------------------------------------------------------------------
# the reference: the formula over (user, item, rating) triples, in plain Python


def reference(ratings, predict, n_users):
    """Pooled and per-user RMSE and MAE of predict(u, i) against ratings {(u, i): r}."""
    squared = [0.0] * n_users
    absolute = [0.0] * n_users
    count = [0] * n_users
    for (u, i), r in sorted(ratings.items()):
        e = predict(u, i) - r
        squared[u] += e * e
        absolute[u] += abs(e)
        count[u] += 1
    n = sum(count)
    total_squared = 0.0
    total_absolute = 0.0
    for (u, i), r in ratings.items():
        e = predict(u, i) - r
        total_squared += e * e
        total_absolute += abs(e)
    pooled = {"rmse": math.sqrt(total_squared / n) if n else math.nan,
              "mae": total_absolute / n if n else math.nan}
    per_user = {"rmse": [math.sqrt(s / c) if c else math.nan for s, c in zip(squared, count)],
                "mae": [a / c if c else math.nan for a, c in zip(absolute, count)]}
    return pooled, per_user, count


def check_against_reference(res, name, ratings, predict, n_users):
    pooled, per_user, count = reference(ratings, predict, n_users)
    assert res.metrics == (name,)
    assert res.kind == "ratings" and res.convention is None
    assert_allclose(res[name], pooled[name], rtol=1e-12, atol=0)
    got = res.per_user(name)
    assert got.dtype == np.float64 and got.shape == (n_users,)
    assert_allclose(got, per_user[name], rtol=1e-12, atol=0)
    assert_array_equal(res.n_relevant, count)
    assert_array_equal(res.counted, np.array(count, dtype=np.int64) > 0)
    assert_array_equal(res.users, np.arange(n_users))
    assert res.n_users == sum(c > 0 for c in count)
    assert res.report["entries"] == sum(count)
    values = [v for v, c in zip(per_user[name], count) if c]
    user_mean = sum(values) / len(values) if values else math.nan
    assert_allclose(res.report["user_mean"], user_mean, rtol=1e-12, atol=0)


# ---------------------------------------------------------------------------------------
# building inputs from {(u, i): value} dicts


def random_ratings(rng, n_users=N_USERS, n_items=N_ITEMS, density=0.35, empty_users=EMPTY_USERS):
    """Half-star ratings 0..5 (a stored 0 is a rating); some users with none, one with one."""
    ratings = {}
    for u in range(n_users):
        if u in empty_users:
            continue
        for i in range(n_items):
            if rng.random() < density:
                ratings[(u, i)] = float(rng.integers(0, 11)) / 2
    ratings[(0, 0)] = 0.0
    ratings[(0, n_items - 1)] = 5.0
    if n_users > 7:
        for i in range(1, n_items):
            ratings.pop((7, i), None)
        ratings[(7, 0)] = 4.5  # user 7 has exactly one rating
    return ratings


def _compressed(entries, n_outer, rng, unsorted):
    """indptr, indices, data with entries {(outer, inner): value}; inner ascending within each
    outer row, or (unsorted) in an order that is never ascending when a row has two or more."""
    by_outer = [[] for _ in range(n_outer)]
    for (o, i), v in sorted(entries.items()):
        by_outer[o].append((i, v))
    indptr, indices, data = [0], [], []
    for row in by_outer:
        if unsorted and len(row) > 1:
            order = rng.permutation(len(row))
            if (np.diff(order) > 0).all():
                order = order[::-1]
            row = [row[k] for k in order]
        indices += [i for i, _ in row]
        data += [v for _, v in row]
        indptr.append(len(indices))
    return (np.array(data, dtype=np.float64), np.array(indices, dtype=np.int32),
            np.array(indptr, dtype=np.int32))


def sparse_from(entries, shape, layout, rng):
    """A scipy sparse array of `shape` storing exactly `entries` {(u, i): value}, in layout
    "csr", "csr-unsorted", "csc" or "coo-shuffled"."""
    if layout in ("csr", "csr-unsorted"):
        parts = _compressed(entries, shape[0], rng, unsorted=layout == "csr-unsorted")
        return sp.csr_array(parts, shape=shape)
    if layout == "csc":
        transposed = {(i, u): v for (u, i), v in entries.items()}
        return sp.csc_array(_compressed(transposed, shape[1], rng, unsorted=False), shape=shape)
    assert layout == "coo-shuffled"
    keys = sorted(entries)
    keys = [keys[k] for k in rng.permutation(len(keys))]
    rows = np.array([u for u, _ in keys], dtype=np.int64)
    cols = np.array([i for _, i in keys], dtype=np.int64)
    data = np.array([entries[key] for key in keys], dtype=np.float64)
    return sp.coo_array((data, (rows, cols)), shape=shape)


def stored_pairs(truth):
    """(user, item) of each position of truth.data, read off the storage directly."""
    if truth.format == "coo":
        return np.asarray(truth.row), np.asarray(truth.col)
    counts = np.diff(truth.indptr)
    outer = np.repeat(np.arange(counts.shape[0]), counts)
    if truth.format == "csr":
        return outer, np.asarray(truth.indices)
    assert truth.format == "csc"
    return np.asarray(truth.indices), outer


def dot(U, V, u, i):
    """U[u] . V[i] as float64 products summed in order, in plain Python."""
    p = 0.0
    for d in range(U.shape[1]):
        p += float(U[u, d]) * float(V[i, d])
    return p


def make_case(ratings, shape, truth_format, form, rng, extra_density=0.2):
    """(truth, args, kwargs, predict): the call's inputs, and predict(u, i) the prediction
    the call must use for the rated pair (u, i)."""
    truth = sparse_from(ratings, shape, truth_format, rng)
    if form in ("factors64", "factors32"):
        dtype = np.float64 if form == "factors64" else np.float32
        U = rng.normal(0.0, 1.0, (shape[0], 5)).astype(dtype)
        V = rng.normal(0.6, 1.0, (shape[1], 5)).astype(dtype)
        return (truth, (), {"user_factors": U, "item_factors": V},
                lambda u, i: dot(U, V, u, i))
    P = rng.normal(3.0, 1.5, shape)

    def predict(u, i):
        return float(P[u, i])

    if form == "dense":
        return truth, (P,), {}, predict
    if form == "aligned":
        rows, cols = stored_pairs(truth)
        return truth, (P[rows, cols],), {}, predict
    entries = {key: float(P[key]) for key in ratings}
    for u, i in zip(*np.nonzero(rng.random(shape) < extra_density)):
        entries[(int(u), int(i))] = float(P[u, i])  # stored but unrated: ignored
    return truth, (sparse_from(entries, shape, form, rng),), {}, predict


def arrays_of(matrix):
    """The arrays a sparse matrix (or a dense array) is made of."""
    if isinstance(matrix, np.ndarray):
        return [matrix]
    if matrix.format == "coo":
        return [matrix.data, matrix.row, matrix.col]
    return [matrix.data, matrix.indices, matrix.indptr]


def all_arrays(args, kwargs, truth):
    return arrays_of(truth) + [a for x in list(args) + list(kwargs.values()) for a in arrays_of(x)]


@pytest.fixture(scope="module")
def ratings():
    return random_ratings(np.random.default_rng(20240611))


# ---------------------------------------------------------------------------------------
# 1. every input form against the reference


@pytest.mark.parametrize("form", PREDICTION_FORMS)
@pytest.mark.parametrize("truth_format", TRUTH_FORMATS)
@pytest.mark.parametrize("func, name", METRICS)
@pytest.mark.slow
def test_matches_reference(ratings, truth_format, form, func, name):
    rng = np.random.default_rng(100 * TRUTH_FORMATS.index(truth_format)
                                + PREDICTION_FORMS.index(form))
    truth, args, kwargs, predict = make_case(ratings, (N_USERS, N_ITEMS), truth_format, form,
                                             rng)
    if truth_format == "csr-unsorted":
        assert not truth.has_sorted_indices  # the case really is non-canonical
    res = func(truth, *args, **kwargs)
    check_against_reference(res, name, ratings, predict, N_USERS)
    assert res.counted[0] and not res.counted[list(EMPTY_USERS)].any()
    assert res.n_relevant[7] == 1


@pytest.mark.parametrize("form", ["csr", "coo-shuffled", "dense", "factors64"])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix,
                                       sp.lil_array, sp.dok_array, sp.lil_matrix])
def test_other_sparse_containers_for_truth(ratings, container, form):
    rng = np.random.default_rng(8)
    truth, args, kwargs, predict = make_case(ratings, (N_USERS, N_ITEMS), "csr", form, rng)
    # a stored zero rating survives these conversions
    res = fr.rmse(container(truth), *args, **kwargs)
    check_against_reference(res, "rmse", ratings, predict, N_USERS)
    res = fr.mae(container(truth), *args, **kwargs)
    check_against_reference(res, "mae", ratings, predict, N_USERS)


@pytest.mark.parametrize("truth_format", ["csr", "csc", "coo-shuffled"])
def test_aligned_predictions_with_scipy_matrix_classes(ratings, truth_format):
    rng = np.random.default_rng(9)
    truth, (values,), _, predict = make_case(ratings, (N_USERS, N_ITEMS), truth_format,
                                             "aligned", rng)
    as_matrix = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix}[truth.format]
    check_against_reference(fr.rmse(as_matrix(truth), values), "rmse", ratings, predict,
                            N_USERS)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_dense_predictions_as_np_matrix_and_list(ratings):
    rng = np.random.default_rng(10)
    truth, (P,), _, predict = make_case(ratings, (N_USERS, N_ITEMS), "csr", "dense", rng)
    check_against_reference(fr.mae(truth, np.asmatrix(P)), "mae", ratings, predict, N_USERS)
    check_against_reference(fr.mae(truth, P.tolist()), "mae", ratings, predict, N_USERS)
    check_against_reference(fr.mae(truth, list(truth.data + 0.25)), "mae", ratings,
                            lambda u, i: ratings[(u, i)] + 0.25, N_USERS)


def test_mixed_and_integer_factor_dtypes(ratings):
    rng = np.random.default_rng(11)
    truth = sparse_from(ratings, (N_USERS, N_ITEMS), "csr", rng)
    U32 = rng.normal(size=(N_USERS, 3)).astype(np.float32)
    V64 = rng.normal(size=(N_ITEMS, 3))
    res = fr.rmse(truth, user_factors=U32, item_factors=V64)
    check_against_reference(res, "rmse", ratings, lambda u, i: dot(U32, V64, u, i), N_USERS)
    Ui = rng.integers(-2, 3, (N_USERS, 3))
    Vi = rng.integers(-2, 3, (N_ITEMS, 3)).astype(np.int32)
    res = fr.mae(truth, user_factors=Ui, item_factors=Vi)
    check_against_reference(res, "mae", ratings, lambda u, i: dot(Ui, Vi, u, i), N_USERS)


def test_index_dtypes_do_not_change_values(ratings):
    rng = np.random.default_rng(12)
    truth, (pred,), _, _ = make_case(ratings, (N_USERS, N_ITEMS), "csr-unsorted", "csr-unsorted",
                                     rng)
    base = fr.rmse(truth, pred)
    for m in (truth, pred):
        m.indices = m.indices.astype(np.int64)
        m.indptr = m.indptr.astype(np.int64)
    wide = fr.rmse(truth, pred)
    assert wide["rmse"] == base["rmse"]
    assert_array_equal(wide.per_user("rmse"), base.per_user("rmse"))


def test_pooled_value_versus_mean_of_users_by_hand():
    # user 0: one error of 3; user 1: three errors of 0. Pooled MAE 3/4, but the mean of the
    # per-user values is (3 + 0) / 2; pooled RMSE sqrt(9/4) happens to equal its user mean.
    truth = sp.csr_array(np.array([[2.0, 0, 0, 0], [1.0, 2.0, 3.0, 0]]))
    pred = np.array([5.0, 1.0, 2.0, 3.0])
    res = fr.mae(truth, pred)
    assert res["mae"] == 0.75
    assert_array_equal(res.per_user("mae"), [3.0, 0.0])
    assert res.report == {"entries": 4, "user_mean": 1.5}
    res = fr.rmse(truth, pred)
    assert res["rmse"] == 1.5 and res.report["user_mean"] == 1.5
    pred = np.array([4.0, 1.0, 2.0, 4.0])  # errors 2 | 0, 0, 1
    res = fr.rmse(truth, pred)
    assert res["rmse"] == pytest.approx(math.sqrt(5 / 4), rel=1e-15)
    assert res.report["user_mean"] == pytest.approx((2 + math.sqrt(1 / 3)) / 2, rel=1e-15)


def test_rmse_is_at_least_mae(ratings):
    rng = np.random.default_rng(13)
    truth, args, _, _ = make_case(ratings, (N_USERS, N_ITEMS), "csr", "dense", rng)
    r, m = fr.rmse(truth, *args), fr.mae(truth, *args)
    assert r["rmse"] >= m["mae"]
    counted = r.counted
    assert (r.per_user("rmse")[counted] >= m.per_user("mae")[counted] - 1e-15).all()
    assert_array_equal(r.counted, m.counted)


# ---------------------------------------------------------------------------------------
# 2. an independent oracle: scikit-learn on the flattened entries


@pytest.mark.parametrize("form", ["dense", "aligned", "coo-shuffled", "factors32"])
def test_matches_sklearn(ratings, form):
    rng = np.random.default_rng(14)
    truth, args, kwargs, _ = make_case(ratings, (N_USERS, N_ITEMS), "coo-shuffled", form, rng)
    rows, cols = stored_pairs(truth)
    y_true = np.asarray(truth.data, dtype=np.float64)
    if form == "dense":
        y_pred = args[0][rows, cols]
    elif form == "aligned":
        y_pred = args[0]
    elif form == "coo-shuffled":
        y_pred = args[0].toarray()[rows, cols]
    else:
        U, V = kwargs["user_factors"], kwargs["item_factors"]
        y_pred = np.einsum("nd,nd->n", U[rows].astype(np.float64), V[cols].astype(np.float64))
    r, m = fr.rmse(truth, *args, **kwargs), fr.mae(truth, *args, **kwargs)
    assert r["rmse"] == pytest.approx(math.sqrt(mean_squared_error(y_true, y_pred)), rel=1e-12)
    assert m["mae"] == pytest.approx(mean_absolute_error(y_true, y_pred), rel=1e-12)
    for u in (0, 1, 5, 7, 28):
        mine = rows == u
        assert mine.any()
        assert r.per_user("rmse")[u] == pytest.approx(
            math.sqrt(mean_squared_error(y_true[mine], y_pred[mine])), rel=1e-12)
        assert m.per_user("mae")[u] == pytest.approx(
            mean_absolute_error(y_true[mine], y_pred[mine]), rel=1e-12)


# ---------------------------------------------------------------------------------------
# 3. edge cases


@pytest.mark.parametrize("func, name", METRICS)
def test_users_without_ratings_are_nan_and_not_counted(ratings, func, name):
    rng = np.random.default_rng(15)
    truth, args, _, _ = make_case(ratings, (N_USERS, N_ITEMS), "csc", "dense", rng)
    res = func(truth, *args)
    empty = list(EMPTY_USERS)
    assert np.isnan(res.per_user(name)[empty]).all()
    assert not res.counted[empty].any() and (res.n_relevant[empty] == 0).all()
    assert np.isfinite(np.delete(res.per_user(name), empty)).all()
    assert res.n_users == N_USERS - len(empty)
    assert res.report["user_mean"] == pytest.approx(np.nanmean(res.per_user(name)), rel=1e-12)


@pytest.mark.parametrize("form", ["csr", "coo-shuffled", "aligned", "dense", "factors64"])
@pytest.mark.parametrize("truth_format", ["csr", "csc", "coo-shuffled"])
@pytest.mark.parametrize("shape", [(0, 0), (0, 4), (3, 0), (3, 4)])
@pytest.mark.parametrize("func, name", METRICS)
@pytest.mark.slow
def test_truth_without_ratings(shape, truth_format, form, func, name):
    rng = np.random.default_rng(16)
    truth, args, kwargs, _ = make_case({}, shape, truth_format, form, rng)
    res = func(truth, *args, **kwargs)
    assert math.isnan(res[name])
    assert res.per_user(name).shape == (shape[0],) and np.isnan(res.per_user(name)).all()
    assert not res.counted.any() and (res.n_relevant == 0).all() and res.n_users == 0
    assert res.report["entries"] == 0 and math.isnan(res.report["user_mean"])


@pytest.mark.parametrize("truth_format", ["csr", "csr-unsorted", "csc", "coo-shuffled"])
def test_stored_zero_ratings_are_ratings(truth_format):
    rng = np.random.default_rng(17)
    ratings = {(0, 0): 0.0, (0, 2): 4.0, (1, 1): 0.0}
    truth = sparse_from(ratings, (3, 3), truth_format, rng)
    predictions = np.ones((3, 3))
    r, m = fr.rmse(truth, predictions), fr.mae(truth, predictions)
    # errors: user 0: 1, -3; user 1: 1; user 2: none
    assert r["rmse"] == pytest.approx(math.sqrt(11 / 3), rel=1e-15)
    assert m["mae"] == pytest.approx(5 / 3, rel=1e-15)
    assert_allclose(r.per_user("rmse"), [math.sqrt(5), 1.0, np.nan], rtol=1e-15)
    assert_allclose(m.per_user("mae"), [2.0, 1.0, np.nan], rtol=1e-15)
    assert_array_equal(r.n_relevant, [2, 1, 0])
    assert r.report["entries"] == 3
    # a sparse prediction of 0 stored at a rated pair is a prediction, not a missing one
    stored_zero = sp.csr_array((np.array([0.0, 4.0, 0.0]), np.array([0, 2, 1]),
                                np.array([0, 2, 3, 3])), shape=(3, 3))
    assert fr.mae(truth, stored_zero)["mae"] == 0.0
    # and dropping the stored zeros drops those ratings
    dropped = sp.csr_array(truth)
    dropped.eliminate_zeros()
    assert_array_equal(fr.mae(dropped, predictions).n_relevant, [1, 0, 0])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float32])
@pytest.mark.parametrize("truth_format", ["csr", "csr-unsorted", "csc", "coo-shuffled"])
@pytest.mark.parametrize("form", ["aligned", "dense", "csr", "factors32"])
@pytest.mark.slow
def test_integer_truth_dtype(ratings, dtype, truth_format, form):
    stars = {key: float(math.floor(r)) for key, r in ratings.items()}  # whole stars 0..5
    rng = np.random.default_rng(18)
    truth, args, kwargs, predict = make_case(stars, (N_USERS, N_ITEMS), truth_format, form, rng)
    as_float = fr.rmse(truth, *args, **kwargs)
    truth.data = truth.data.astype(dtype)
    res = fr.rmse(truth, *args, **kwargs)
    check_against_reference(res, "rmse", stars, predict, N_USERS)
    assert res["rmse"] == as_float["rmse"]
    assert_array_equal(res.per_user("rmse"), as_float.per_user("rmse"))


@pytest.mark.parametrize("form", ["aligned", "dense", "csr", "csc"])
def test_integer_predictions(ratings, form):
    rng = np.random.default_rng(19)
    truth, (pred,), _, _ = make_case(ratings, (N_USERS, N_ITEMS), "coo-shuffled", form, rng)
    if sp.issparse(pred):
        pred.data = np.rint(pred.data).astype(np.int32)
        dense = pred.toarray()
    else:
        pred = np.rint(pred).astype(np.int16)
        dense = None
    res = fr.mae(truth, pred)
    rows, cols = stored_pairs(truth)
    values = pred if form == "aligned" else (dense if dense is not None else pred)[rows, cols]
    expect = {(int(u), int(i)): float(v) for u, i, v in zip(rows, cols, values)}
    check_against_reference(res, "mae", ratings, lambda u, i: expect[(u, i)], N_USERS)


@pytest.mark.parametrize("form", PREDICTION_FORMS)
@pytest.mark.parametrize("truth_format", TRUTH_FORMATS)
@pytest.mark.slow
def test_read_only_inputs(ratings, truth_format, form):
    rng = np.random.default_rng(20)
    truth, args, kwargs, predict = make_case(ratings, (N_USERS, N_ITEMS), truth_format, form,
                                             rng)
    writable = fr.rmse(truth, *args, **kwargs), fr.mae(truth, *args, **kwargs)
    for a in all_arrays(args, kwargs, truth):
        a.flags.writeable = False
    frozen = fr.rmse(truth, *args, **kwargs), fr.mae(truth, *args, **kwargs)
    for before, after, name in zip(writable, frozen, ("rmse", "mae")):
        assert after[name] == before[name]
        assert_array_equal(after.per_user(name), before.per_user(name))
    check_against_reference(frozen[0], "rmse", ratings, predict, N_USERS)


@pytest.mark.parametrize("form", PREDICTION_FORMS)
@pytest.mark.parametrize("truth_format", TRUTH_FORMATS)
def test_callers_arrays_are_never_modified(ratings, truth_format, form):
    rng = np.random.default_rng(21)
    truth, args, kwargs, _ = make_case(ratings, (N_USERS, N_ITEMS), truth_format, form, rng)
    arrays = all_arrays(args, kwargs, truth)
    before = [a.copy() for a in arrays]
    fr.rmse(truth, *args, **kwargs)
    fr.mae(truth, *args, n_threads=1, **kwargs)
    for a, b in zip(arrays, before):
        assert a.dtype == b.dtype
        assert_array_equal(a, b, strict=True)
    # the objects still hold those very arrays, in their original (unsorted) order
    for a, b in zip(all_arrays(args, kwargs, truth), before):
        assert_array_equal(a, b, strict=True)
    if truth_format == "csr-unsorted":
        assert not sp.csr_array(truth.copy()).has_sorted_indices
    if form == "csr-unsorted":
        assert not args[0].copy().has_sorted_indices


@pytest.mark.parametrize("layout", ["csr", "csr-unsorted", "csc", "coo-shuffled"])
def test_extra_stored_predictions_are_ignored(ratings, layout):
    rng = np.random.default_rng(22)
    P = rng.normal(3.0, 1.0, (N_USERS, N_ITEMS))
    truth = sparse_from(ratings, (N_USERS, N_ITEMS), "csr", rng)
    exact = {key: float(P[key]) for key in ratings}
    padded = dict(exact)
    for u in range(N_USERS):
        for i in range(N_ITEMS):
            padded.setdefault((u, i), 1e6)  # wild values at unrated pairs, every user
    a = fr.rmse(truth, sparse_from(exact, (N_USERS, N_ITEMS), layout, rng))
    b = fr.rmse(truth, sparse_from(padded, (N_USERS, N_ITEMS), layout, rng))
    assert a["rmse"] == b["rmse"] and a.report == b.report
    assert_array_equal(a.per_user("rmse"), b.per_user("rmse"))
    assert_array_equal(a.counted, b.counted)
    check_against_reference(b, "rmse", ratings, lambda u, i: float(P[u, i]), N_USERS)


@pytest.mark.parametrize("form", PREDICTION_FORMS)
@pytest.mark.parametrize("truth_format", TRUTH_FORMATS)
@pytest.mark.slow
def test_thread_count_does_not_change_values(truth_format, form):
    assert MAX_THREADS >= 2
    rng = np.random.default_rng(23)
    ratings = random_ratings(rng, n_users=400, n_items=50, density=0.2)
    truth, args, kwargs, _ = make_case(ratings, (400, 50), truth_format, form, rng)
    threads_before = numba.get_num_threads()
    for func, name in ((fr.rmse, "rmse"), (fr.mae, "mae")):
        one = func(truth, *args, n_threads=1, **kwargs)
        many = func(truth, *args, n_threads=MAX_THREADS, **kwargs)
        default = func(truth, *args, **kwargs)
        for res in (many, default):
            assert res[name] == one[name]
            assert res.report == one.report
            assert_array_equal(res.per_user(name), one.per_user(name))
            assert_array_equal(res.n_relevant, one.n_relevant)
    assert numba.get_num_threads() == threads_before


def test_result_arrays_are_read_only(ratings):
    rng = np.random.default_rng(24)
    truth, args, _, _ = make_case(ratings, (N_USERS, N_ITEMS), "csr", "dense", rng)
    res = fr.rmse(truth, *args)
    for arr in (res.per_user("rmse"), res.counted, res.n_relevant, res.users):
        with pytest.raises(ValueError):
            arr[0] = arr[1]
    assert dict(res) == {"rmse": res["rmse"]} and res.to_dict() == {"rmse": res["rmse"]}
    with pytest.raises(KeyError, match="mae"):
        res["mae"]


# ---------------------------------------------------------------------------------------
# 4. errors: the type, and a message that names the argument

T_DENSE = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])  # 2 users x 3 items, 3 ratings


def truth_csr():
    return sp.csr_array(T_DENSE)


def raw_csr(data, indices, indptr, shape=(2, 3)):
    return sp.csr_array((np.array(data, float), np.array(indices, np.int32),
                         np.array(indptr, np.int32)), shape=shape)


def raw_coo(data, rows, cols, shape=(2, 3)):
    return sp.coo_array((np.array(data, float), (np.array(rows), np.array(cols))), shape=shape)


def raw_csc(data, indices, indptr, shape=(2, 3)):
    return sp.csc_array((np.array(data, float), np.array(indices, np.int32),
                         np.array(indptr, np.int32)), shape=shape)


def with_value(matrix, k, value):
    matrix = matrix.copy()
    matrix.data[k] = value
    return matrix


U2, V3 = np.ones((2, 2)), np.ones((3, 2))
DUP_TRUTH = r"truth stores \(user 0, item 2\) more than once"
DUP_PRED = r"predictions stores \(user 0, item 2\) more than once"
BAD_TRUTH = r"truth has 1 NaN or infinite values"
BAD_PRED = r"predictions has 1 NaN or infinite values"
FULL = np.full((2, 3), 1.5)

VALUE_ERRORS = [
    # duplicate (user, item) in truth, in each layout
    ("dup-truth-csr", raw_csr([1, 2, 2.5, 3], [0, 2, 2, 1], [0, 3, 4]), (FULL,), {}, DUP_TRUTH),
    ("dup-truth-csr-unsorted", raw_csr([2, 1, 2.5, 3], [2, 0, 2, 1], [0, 3, 4]), (FULL,), {},
     DUP_TRUTH),
    ("dup-truth-coo", raw_coo([2, 3, 1, 2.5], [0, 1, 0, 0], [2, 1, 0, 2]), (FULL,), {},
     DUP_TRUTH),
    ("dup-truth-csc", raw_csc([1, 3, 2, 2.5], [0, 1, 0, 0], [0, 1, 2, 4]), (FULL,), {},
     DUP_TRUTH),
    # duplicate (user, item) in sparse predictions
    ("dup-pred-csr", truth_csr(), (raw_csr([1, 2, 2.5, 3], [0, 2, 2, 1], [0, 3, 4]),), {},
     DUP_PRED),
    ("dup-pred-csr-unsorted", truth_csr(), (raw_csr([2, 1, 2.5, 3], [2, 0, 2, 1], [0, 3, 4]),),
     {}, DUP_PRED),
    ("dup-pred-csc", truth_csr(), (raw_csc([1, 3, 2, 2.5], [0, 1, 0, 0], [0, 1, 2, 4]),), {},
     DUP_PRED),
    # NaN and infinities in truth
    ("nan-truth-csr", with_value(truth_csr(), 1, np.nan), (FULL,), {}, BAD_TRUTH),
    ("inf-truth-csr", with_value(truth_csr(), 0, np.inf), (FULL,), {}, BAD_TRUTH),
    ("nan-truth-coo", with_value(sp.coo_array(T_DENSE), 2, np.nan), (FULL,), {}, BAD_TRUTH),
    ("ninf-truth-csc", with_value(sp.csc_array(T_DENSE), 1, -np.inf), (FULL,), {}, BAD_TRUTH),
    ("nan-truth-unsorted", raw_csr([2, np.nan, 3], [2, 0, 1], [0, 2, 3]), (FULL,), {},
     BAD_TRUTH),
    ("nan-truth-factors", with_value(truth_csr(), 1, np.nan), (),
     {"user_factors": U2, "item_factors": V3}, BAD_TRUTH),
    # NaN and infinities in predictions, in each form
    ("nan-pred-1d", truth_csr(), (np.array([1.0, np.nan, 2.0]),), {}, BAD_PRED),
    ("inf-pred-1d", truth_csr(), (np.array([1.0, 1.0, -np.inf]),), {}, BAD_PRED),
    ("nan-pred-dense", truth_csr(), (np.where(T_DENSE == 3.0, np.nan, 1.0),), {}, BAD_PRED),
    ("inf-pred-sparse", truth_csr(), (with_value(sp.csr_array(FULL), 4, np.inf),), {},
     BAD_PRED),
    ("nan-pred-coo", truth_csr(), (with_value(sp.coo_array(FULL), 0, np.nan),), {}, BAD_PRED),
    ("nan-user-factors", truth_csr(), (), {"user_factors": np.array([[1.0, np.nan], [0, 0]]),
                                           "item_factors": V3}, r"user_factors contains NaN"),
    ("inf-item-factors", truth_csr(), (), {"user_factors": U2,
                                           "item_factors": np.full((3, 2), np.inf)},
     r"item_factors contains NaN or infinite"),
    # shapes and lengths
    ("sparse-pred-shape", truth_csr(), (sp.csr_array(np.ones((2, 4))),), {},
     r"predictions has shape \(2, 4\) but truth has \(2, 3\)"),
    ("sparse-pred-transposed", truth_csr(), (sp.csr_array(np.ones((3, 2))),), {},
     r"predictions has shape \(3, 2\) but truth has \(2, 3\)"),
    ("dense-pred-shape", truth_csr(), (np.ones((3, 3)),), {},
     r"predictions has shape \(3, 3\) but truth has \(2, 3\)"),
    ("1d-too-long", truth_csr(), (np.ones(4),), {},
     r"predictions has 4 values but truth stores 3 ratings"),
    ("1d-too-short", sp.coo_array(T_DENSE), (np.ones(2),), {},
     r"predictions has 2 values but truth stores 3 ratings"),
    ("1d-full-grid", truth_csr(), (np.ones(6),), {}, r"predictions has 6 values"),
    ("0d-pred", truth_csr(), (2.5,), {}, r"predictions must be sparse, 1-D .* got 0 dim"),
    ("3d-pred", truth_csr(), (np.ones((2, 3, 1)),), {},
     r"predictions must be sparse, 1-D .* got 3 dim"),
    ("missing-pred", truth_csr(), (raw_csr([1, 2, 3], [0, 2, 2], [0, 2, 3]),), {},
     r"predictions stores no value for 1 rated pairs, the first \(user 1, item 1\)"),
    ("missing-pred-coo", raw_coo([3, 1], [1, 0], [1, 0]), (raw_coo([1.0], [0], [0]),), {},
     r"predictions stores no value for 1 rated pairs, the first \(user 1, item 1\)"),
    ("missing-pred-all", truth_csr(), (sp.csr_array((2, 3)),), {},
     r"predictions stores no value for 3 rated pairs, the first \(user 0, item 0\)"),
    # factor matrices
    ("user-factor-rows", truth_csr(), (), {"user_factors": np.ones((3, 2)), "item_factors": V3},
     r"user_factors has 3 rows but truth has 2 rows"),
    ("item-factor-rows", truth_csr(), (), {"user_factors": U2, "item_factors": np.ones((2, 2))},
     r"item_factors has 2 rows but truth has 3 columns"),
    ("factor-widths", truth_csr(), (), {"user_factors": U2, "item_factors": np.ones((3, 4))},
     r"user_factors has 2 factors per row but item_factors has 4"),
    ("factor-1d", truth_csr(), (), {"user_factors": np.ones(2), "item_factors": V3},
     r"user_factors must be 2-D"),
    # threads
    ("zero-threads", truth_csr(), (FULL,), {"n_threads": 0}, r"n_threads must be between 1"),
    ("too-many-threads", truth_csr(), (FULL,), {"n_threads": MAX_THREADS + 1},
     r"n_threads must be between 1"),
]

TYPE_ERRORS = [
    ("both", (FULL,), {"user_factors": U2, "item_factors": V3},
     r"pass either predictions or factors, not both"),
    ("predictions-and-user-factors", (FULL,), {"user_factors": U2},
     r"pass either predictions or factors, not both"),
    ("predictions-and-item-factors", (FULL,), {"item_factors": V3},
     r"pass either predictions or factors, not both"),
    ("neither", (), {}, r"pass predictions, or user_factors and item_factors"),
    ("neither-explicit-none", (None,), {"user_factors": None, "item_factors": None},
     r"pass predictions, or user_factors and item_factors"),
    ("only-user-factors", (), {"user_factors": U2}, r"pass both user_factors and item_factors"),
    ("only-item-factors", (), {"item_factors": V3}, r"pass both user_factors and item_factors"),
    ("str-pred", (np.array(["1", "2", "3"]),), {}, r"predictions must be numeric; got dtype <U1"),
    ("object-pred", (np.array([1.0, None, 2.0], dtype=object),), {},
     r"predictions must be numeric; got dtype object"),
    ("complex-pred", (np.ones((2, 3), complex),), {}, r"predictions must be numeric"),
    ("bool-dense-pred", (np.ones((2, 3), bool),), {}, r"predictions must be numeric"),
    ("bool-1d-pred", (np.ones(3, bool),), {}, r"predictions must be numeric"),
    ("complex-sparse-pred", (sp.csr_array(FULL.astype(complex)),), {},
     r"predictions values must be numeric"),
    ("str-factors", (), {"user_factors": np.full((2, 2), "a"), "item_factors": V3},
     r"user_factors must be a numeric 2-D array"),
    ("bool-factors", (), {"user_factors": U2, "item_factors": np.ones((3, 2), bool)},
     r"item_factors must be a numeric 2-D array"),
    ("float-threads", (FULL,), {"n_threads": 1.5}, r"n_threads must be an int"),
]


@pytest.mark.parametrize("label, truth, args, kwargs, match", VALUE_ERRORS,
                         ids=[case[0] for case in VALUE_ERRORS])
@pytest.mark.parametrize("func, name", METRICS)
def test_value_errors(func, name, label, truth, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(truth, *args, **kwargs)


@pytest.mark.parametrize("label, args, kwargs, match", TYPE_ERRORS,
                         ids=[case[0] for case in TYPE_ERRORS])
@pytest.mark.parametrize("func, name", METRICS)
def test_type_errors(func, name, label, args, kwargs, match):
    with pytest.raises(TypeError, match=match):
        func(truth_csr(), *args, **kwargs)


@pytest.mark.parametrize("func, name", METRICS)
def test_argument_errors_name_the_function(func, name):
    with pytest.raises(TypeError, match=rf"^{name}: pass either predictions or factors"):
        func(truth_csr(), FULL, user_factors=U2, item_factors=V3)
    with pytest.raises(TypeError, match=rf"^{name}: pass both"):
        func(truth_csr(), user_factors=U2)
    with pytest.raises(TypeError):
        func(truth_csr(), FULL, U2)  # the factors are keyword-only


@pytest.mark.parametrize("truth, match", [
    (T_DENSE, r"truth must be a scipy.sparse matrix or array"),
    (T_DENSE.tolist(), r"truth must be a scipy.sparse matrix or array"),
    (sp.csr_array(T_DENSE.astype(complex)), r"truth values must be numeric"),
    (sp.csc_array(T_DENSE.astype(complex)), r"truth values must be numeric"),
    (sp.coo_array(T_DENSE.astype(complex)), r"truth values must be numeric"),
    (sp.coo_array(T_DENSE > 0), r"truth values must be numeric"),
], ids=["dense", "list", "complex-csr", "complex-csc", "complex-coo", "bool-coo"])
@pytest.mark.parametrize("func, name", METRICS)
def test_bad_truth_types(func, name, truth, match):
    with pytest.raises(TypeError, match=match):
        func(truth, FULL)


def test_truth_is_checked_before_the_predictions():
    with pytest.raises(ValueError, match=DUP_TRUTH):
        fr.rmse(raw_csr([1, 2, 2.5, 3], [0, 2, 2, 1], [0, 3, 4]), np.ones(7))


def test_malformed_truth_is_an_error_not_a_crash():
    bad = truth_csr()
    bad.indices = np.array([0, 5, 1], dtype=np.int32)  # column 5 of 3
    with pytest.raises(ValueError, match=r"truth is a malformed CSR matrix"):
        fr.rmse(bad, FULL)
    bad = raw_csr([1, 2, 3], [0, 2, 1], [0, 2, 3])
    bad.indptr = np.array([0, 2, 5], dtype=np.int32)
    with pytest.raises(ValueError, match=r"truth is a malformed CSR matrix"):
        fr.mae(bad, FULL)


# ---------------------------------------------------------------------------------------
# consistency across layouts (found as bugs in review, now fixed)


def test_duplicate_in_coo_predictions_is_an_error():
    pred = raw_coo([1.0, 2.0, 0.5, 3.0], [0, 0, 0, 1], [0, 2, 2, 1])
    with pytest.raises(ValueError, match=DUP_PRED):
        fr.rmse(truth_csr(), pred)


def test_bool_sparse_predictions_are_rejected_like_dense_ones():
    with pytest.raises(TypeError, match=r"predictions"):
        fr.rmse(truth_csr(), sp.csr_array(np.ones((2, 3), bool)))


@pytest.mark.parametrize("container", [sp.csr_array, sp.csc_array])
def test_bool_truth_is_rejected_in_every_layout(container):
    with pytest.raises(TypeError, match=r"truth values must be numeric"):
        fr.rmse(container(T_DENSE > 0), FULL)


def test_one_dimensional_sparse_truth_names_the_argument():
    with pytest.raises(ValueError, match=r"truth must be 2-D"):
        fr.rmse(sp.coo_array(np.array([1.0, 2.0])), np.ones(2))


def test_nan_at_an_unrated_pair_of_sparse_predictions_is_ignored():
    dense = np.asarray(FULL, dtype=float).copy()
    unrated = np.argwhere(T_DENSE == 0)[0]
    dense[tuple(unrated)] = np.nan
    assert fr.rmse(truth_csr(), sp.csr_array(dense))["rmse"] == fr.rmse(truth_csr(), FULL)["rmse"]


# ---------------------------------------------------------------------------------------
# 5. random small cases, with every quirk of layout and form


@st.composite
def rating_cases(draw):
    n_users = draw(st.integers(0, 6))
    n_items = draw(st.integers(1, 6))
    ratings = {}
    for u in range(n_users):
        for i in draw(st.lists(st.integers(0, n_items - 1), unique=True, max_size=n_items)):
            ratings[(u, i)] = draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 5.0, -2.0]))
    return (ratings, (n_users, n_items), draw(st.sampled_from(TRUTH_FORMATS)),
            draw(st.sampled_from(PREDICTION_FORMS)), draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=30, deadline=None)
@given(rating_cases(), st.sampled_from([1, MAX_THREADS]))
def test_random_cases_match_reference(case, n_threads):
    ratings, shape, truth_format, form, seed = case
    rng = np.random.default_rng(seed)
    truth, args, kwargs, predict = make_case(ratings, shape, truth_format, form, rng)
    for func, name in ((fr.rmse, "rmse"), (fr.mae, "mae")):
        res = func(truth, *args, n_threads=n_threads, **kwargs)
        check_against_reference(res, name, ratings, predict, shape[0])
