"""Beyond-accuracy measures inside `fastrank.evaluate`: coverage, gini, entropy, novelty, arp,
ild, serendipity (the registry's "beyond" engine). Their side inputs (`train=`, `item_aspects=`
/ `item_vectors=`, `baseline=`) are checked once here; the walk is `fastrank._kernels.beyond`.

coverage, gini and entropy describe the catalogue, not a user: they have one value (the
mean slot of the Result) and no per-user values. The rest are per user, NaN where the
convention does not count the user, like every other metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix
from .aspects import check_aspects
from .threads import n_ranges
from .validation import Truth, _csr_parts, check_scratch, out_of_memory, summed_copy

if TYPE_CHECKING:
    from .grammar import Request

_WHY = {"train": "the training interactions, to count each item's training users",
        "item_aspects": "the aspects (topics, genres) of each item",
        "item_aspects|item_vectors": "to measure how different two items are",
        "baseline": "the lists to be unexpected against (e.g. baseline='popular', with train=)",
        "propensity|train": "each item's chance of being observed: an array of n_items, or "
                            "estimated from the popularity of the items in train="}

# where a measure reads a side input for another reason than _WHY's
_WHY_OF = {("miscalibration", "train"): "the training interactions: each user's profile of "
                                        "aspects, which the lists should reflect"}


def train_parts(train: SparseMatrix, n_items: int) -> tuple[IntArray, AnyArray, FloatArray]:
    """(indptr, indices, values as float64) of a checked train matrix: n_items columns,
    every stored value finite, canonical (a row's indices strictly increase: repeated
    (user, item) entries are summed on a copy, as the truth's are)."""
    indptr, indices, data, (rows, cols), canonical = _csr_parts(train, "train",
                                                                "interactions")
    if cols != n_items:
        raise ValueError(
            f"train has {cols} columns but truth has {n_items} items; both must index the "
            f"same catalogue")
    values = np.asarray(data, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError("train contains NaN or infinite values; every stored entry is an "
                         "interaction (a weight), so replace them (e.g. with 1)")
    if not canonical:  # a user counts an item once, with the sum of its entries
        indptr, indices, values = summed_copy(indptr, indices, values, (rows, cols))
        if not np.isfinite(values).all():
            raise ValueError("train has repeated (user, item) entries whose values sum past "
                             "float64's range; sum them yourself, or scale them down")
    return indptr, indices, values


def popularity(train: SparseMatrix, n_items: int) -> tuple[FloatArray, int]:
    """(training users per item as float64, how many training users have any item)."""
    indptr, indices, data = train_parts(train, n_items)
    positive = data > 0
    counts = np.bincount(np.asarray(indices)[positive], minlength=n_items).astype(np.float64)
    owners = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))[positive]
    return counts, int(np.unique(owners).shape[0])


def _vectors(item_vectors: ArrayLike, n_items: int) -> FloatArray:
    if sp.issparse(item_vectors):
        raise TypeError("item_vectors must be a dense (n_items, dims) array; got a sparse "
                        "matrix: pass item_vectors.toarray(), or item_aspects= for sets")
    try:
        vectors = np.asarray(item_vectors)
    except ValueError:  # numpy's 'inhomogeneous shape': rows of different lengths
        raise ValueError(f"item_vectors must be a (n_items={n_items}, dims) array; its rows "
                         f"have different lengths: give every item a vector of the same "
                         f"dims") from None
    if vectors.dtype.kind not in "biuf":
        raise TypeError(f"item_vectors must hold real numbers; got dtype {vectors.dtype}")
    if vectors.ndim != 2 or vectors.shape[0] != n_items:
        raise ValueError(
            f"item_vectors must be a (n_items={n_items}, dims) array; got shape "
            f"{vectors.shape}")
    if vectors.shape[1] == 0:
        raise ValueError(f"item_vectors has 0 dimensions per item (shape {vectors.shape}): "
                         f"cosine distances need vectors of at least one dimension")
    vectors = vectors.astype(np.float64)
    if not np.isfinite(vectors).all():
        raise ValueError("item_vectors contains NaN or infinite values")
    # each vector divided by its largest |entry| first: cosine is the same at any scale,
    # and the norm of 1e-200 or 1e200 entries neither underflows to 0 nor overflows
    largest = np.abs(vectors).max(axis=1, keepdims=True)
    vectors = np.divide(vectors, largest, out=np.zeros_like(vectors), where=largest > 0)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms,  # type: ignore[no-any-return]  # numpy: Any with out=
                     out=np.zeros_like(vectors), where=norms > 0)


def _baseline(baseline: str | ArrayLike, n_rows: int, n_items: int,
              pop: tuple[FloatArray, int] | None) -> IntArray:
    if isinstance(baseline, str):
        if baseline != "popular":
            raise ValueError(f"baseline must be 'popular' or an array of item ids; got "
                             f"{baseline!r}")
        if pop is None:
            raise ValueError("baseline='popular' needs train= to rank items by popularity")
        # the most popular items (ties: the lower id), the same list for everyone: an
        # empty list here, each item's place in it for the kernel (`popular_places`)
        return np.full((1, 1), -1, np.int64)
    try:
        ids = np.asarray(baseline)
    except ValueError:  # numpy's 'inhomogeneous shape': lists of different lengths
        raise ValueError(f"baseline must be one list of item ids or one list per topk row, "
                         f"all as long ({n_rows} rows): pad shorter lists with -1") from None
    if ids.size == 0 and not isinstance(baseline, np.ndarray):
        ids = ids.astype(np.int64)  # numpy's float64 of [] is no choice of the caller's
    if ids.dtype.kind not in "iu":
        raise TypeError(f"baseline must hold integer item ids; got dtype {ids.dtype}")
    if ids.ndim == 1:
        ids = ids[None, :]
    if ids.ndim != 2 or ids.shape[0] not in (1, n_rows):
        raise ValueError(
            f"baseline must be one list of item ids (1-D) or one list per topk row "
            f"({n_rows} rows); got shape {np.shape(baseline)}")
    if ids.size and (int(ids.min()) < -1 or int(ids.max()) >= n_items):
        bad = int(ids.min()) if int(ids.min()) < -1 else int(ids.max())
        raise ValueError(f"baseline contains item id {bad}, outside [-1, {n_items}); -1 only "
                         f"pads")
    return np.ascontiguousarray(ids, dtype=np.int64)


def check_side_inputs(specs: Sequence[Request], *, train: SparseMatrix | None,
                      item_aspects: SparseMatrix | None, item_vectors: ArrayLike | None,
                      baseline: Any, baseline_later: bool = False,
                      propensity: ArrayLike | None = None) -> None:
    """Each measure has the side input it needs (and ild not two notions of distance)."""
    given = {"train": train is not None,
             "propensity|train": propensity is not None or train is not None,
             "baseline": baseline is not None or baseline_later,
             "item_aspects|item_vectors": item_aspects is not None
             or item_vectors is not None, "item_aspects": item_aspects is not None}
    for spec in specs:
        for need in spec.metric.needs:
            if not given[need]:
                why = _WHY_OF.get((spec.name, need), _WHY[need])
                raise ValueError(f"{spec.label} needs {need.replace('|', '= or ')}= "
                                 f"({why})")
    if item_aspects is not None and item_vectors is not None and \
            any(s.name == "ild" for s in specs):
        raise ValueError("ild takes one notion of distance: pass item_aspects= (Jaccard) "
                         "or item_vectors= (cosine), not both")


def check_side_shapes(n_items: int, *, train: SparseMatrix | None,
                      item_aspects: SparseMatrix | None, item_vectors: ArrayLike | None,
                      propensity: ArrayLike | None, baseline: Any) -> None:
    """The side inputs given, whether a metric asked uses them or not, fit the catalogue:
    a train or aspects matrix of another catalogue, vectors or propensities of another
    length, an unknown baseline name are errors (SPEC 5: mismatched shapes), not dropped.
    Shapes only (no entry is read): the metrics that use an input check its entries."""
    for name, matrix, axis in (("train", train, 1), ("item_aspects", item_aspects, 0)):
        if matrix is None:
            continue
        if not sp.issparse(matrix):
            raise TypeError(f"{name} must be a scipy.sparse matrix or array; got "
                            f"{type(matrix).__name__}")
        if matrix.ndim != 2 or matrix.shape[axis] != n_items:
            where = "columns" if axis else "rows"
            raise ValueError(f"{name} has shape {matrix.shape}, and its {where} must be the "
                             f"truth's {n_items} items; both must index the same catalogue")
    for name, array in (("item_vectors", item_vectors), ("propensity", propensity)):
        if array is not None and not sp.issparse(array) and \
                (np.ndim(array) < 1 or np.shape(array)[0] != n_items):
            raise ValueError(f"{name} has shape {np.shape(array)}, and needs one row per "
                             f"item of the truth ({n_items})")
    if isinstance(baseline, str) and baseline != "popular":
        raise ValueError(f"baseline must be 'popular' or an array of item ids; got "
                         f"{baseline!r}")


class BeyondPlan:
    """The beyond-accuracy specs with their side inputs checked and prepared once, ready to
    run on any block of lists (`run`) and to turn accumulated values into means (`means`)."""

    def __init__(self, specs: Sequence[Request], n_items: int, k_max: int, *,
                 train: SparseMatrix | None, item_aspects: SparseMatrix | None,
                 item_vectors: ArrayLike | None, baseline: str | ArrayLike | None,
                 baseline_later: bool = False) -> None:
        """specs whose side inputs `check_side_inputs` has accepted. baseline_later: the
        plan of an Evaluator, whose blocks are not known yet: a baseline given now is one
        list for every row, and per-row lists go with each block."""
        from ._kernels.beyond import ILD_COSINE, ILD_JACCARD

        names = {s.name for s in specs}
        self.n_items, self.k_max = n_items, k_max
        check_scratch(n_items, 16, 1)  # novelty and popularity of every item
        self.pop = popularity(train, n_items) if train is not None else None
        self.counts = self.pop[0] if self.pop else np.zeros(n_items)
        n_train = max(self.pop[1], 1) if self.pop else 1
        self.novelty = -np.log2(np.maximum(self.counts, 1.0) / n_train)  # unseen: seen once
        self.baseline = baseline
        if baseline is not None:  # checked now (its name, ids, train=), not at a block
            try:
                shape = () if isinstance(baseline, str) else np.shape(baseline)
            except ValueError:  # ragged lists: _baseline names them
                shape = ()
            rows = shape[0] if len(shape) == 2 else 1
            if baseline_later and rows > 1:
                raise ValueError(
                    f"baseline has one list per row (shape {shape}), but an "
                    f"Evaluator is built before its blocks: pass each block's lists with "
                    f"it, update(users, topk, baseline=rows), or here one list (1-D) shared "
                    f"by every row")
            _baseline(baseline, rows, n_items, self.pop)
        self.ild_mode, self.a_indptr, self.a_indices = -1, np.zeros(1, np.int64), \
            np.zeros(0, np.int64)
        self.vectors = np.zeros((1, 1))
        if "ild" in names:
            if item_vectors is not None:
                self.ild_mode, self.vectors = ILD_COSINE, _vectors(item_vectors, n_items)
            else:
                aspects = check_aspects(item_aspects, n_items)
                self.ild_mode = ILD_JACCARD
                self.a_indptr, self.a_indices = aspects.indptr, aspects.indices
        self.per_user = [s for s in specs if s.metric.per_user]
        self.catalogue = [s for s in specs if not s.metric.per_user]
        self.cutoffs = np.array(sorted({s.k for s in specs}), dtype=np.int64)
        self.position = {int(k): c for c, k in enumerate(self.cutoffs)}
        self.slot_code = np.array([s.code for s in self.per_user], dtype=np.int64)
        self.slot_cut = np.array([self.position[s.k] for s in self.per_user], dtype=np.int64)

    def run(self, data: Truth, topk: AnyArray, rows: IntArray, counted: BoolArray,
            threads: int, baseline: str | ArrayLike | None = None
            ) -> tuple[FloatArray, IntArray | None]:
        """(per-user values, one row per per-user spec; exposure of the counted users'
        lists, int64 (cutoffs x n_items), or None without catalogue specs)."""
        from ._kernels import frames
        from ._kernels.beyond import beyond_rows

        n_rows = topk.shape[0]
        baseline = self.baseline if baseline is None else baseline
        if baseline is None and "serendipity" in {s.name for s in self.per_user}:
            raise ValueError("serendipity needs baseline= (with this block, or when the "
                             "Evaluator is built)")
        base = (_baseline(baseline, n_rows, self.n_items, self.pop)
                if baseline is not None else np.full((1, 1), -1, np.int64))
        # baseline="popular": serendipity@k is against the k most popular items, the
        # primitive model's list as long as the one judged (Ge et al. 2010), not against
        # as many as the lists have columns
        places = (self.popular_places if isinstance(baseline, str)  # _baseline checked it
                  else np.zeros(0, np.int64))
        n_chunks = max(n_ranges(n_rows, threads, n_rows * topk.shape[1], self.n_items), 1)
        # three int64 markers per item and range, and the exposure counts
        check_scratch(self.n_items, 24 + (4 * self.cutoffs.shape[0] if self.catalogue else 0),
                      n_chunks)
        exposure = np.zeros((n_chunks if self.catalogue else 0, self.cutoffs.shape[0],
                             self.n_items), np.int32)
        out = np.empty((len(self.per_user), n_rows), np.float64)
        args = (topk, rows, counted.view(np.uint8), self.cutoffs, self.slot_code,
                self.slot_cut, self.novelty, self.counts, data.indptr, data.indices, data.data,
                base, self.ild_mode, self.a_indptr, self.a_indices, self.vectors, self.n_items,
                out, exposure, places)
        frame = frames.Frame(*args)
        done = frames.run(frames.walk(beyond_rows, frame.dtypes), frame, n_chunks)
        if not done.all():  # the walk's C wrapper cannot raise: it returned 0
            raise out_of_memory("the beyond-accuracy kernel")
        shown = None
        if self.catalogue:  # the exposure, and a last column: the counted rows it is of
            shown = np.empty((self.cutoffs.shape[0], self.n_items + 1), np.int64)
            exposure.sum(axis=0, dtype=np.int64, out=shown[:, :-1])
            shown[:, -1] = np.count_nonzero(counted)
        return out, shown

    @cached_property
    def popular_places(self) -> IntArray:
        """Each item's place (0 = the most popular) in the items ordered by falling
        training count, ties by the lower id: baseline="popular", found once for every
        block."""
        order = np.lexsort((np.arange(self.n_items), -self.counts))
        places = np.empty(self.n_items, np.int64)
        places[order] = np.arange(self.n_items)
        return places

    def catalogue_means(self, shown: IntArray | None) -> dict[str, float]:
        """{label: value} of coverage, gini and entropy from the exposure of `run` (summed over
        blocks). With no counted user (or before any block) both are NaN, as every mean
        over no user is: a gini of 0 would read as an equal exposure."""
        if shown is None or shown[0, -1] == 0:
            return {spec.label: np.nan for spec in self.catalogue}
        cumulative = np.cumsum(shown[:, :-1], axis=0)
        measure = {"coverage": _coverage, "gini": _gini, "entropy": _entropy}
        return {spec.label: measure[spec.name](cumulative[self.position[spec.k]])
                for spec in self.catalogue}


def _coverage(exposure: IntArray) -> float:
    return float(np.count_nonzero(exposure) / exposure.shape[0]) if exposure.size else 0.0


def _entropy(exposure: IntArray) -> float:
    """Shannon entropy (natural log) of the exposure shares, divided by the number of
    items shown (RecBole's ShannonEntropy); 0 when nothing is shown."""
    x = exposure[exposure > 0].astype(np.float64)
    if x.size == 0:
        return 0.0
    p = x / x.sum()
    return float(-(p * np.log(p)).sum() / x.size)


def _gini(exposure: IntArray) -> float:
    """Gini index of item exposure over the whole catalogue (0: equal, -> 1: one item)."""
    n = exposure.shape[0]
    total = exposure.sum()
    if n == 0 or total == 0:
        return 0.0
    ranked = np.sort(exposure).astype(np.float64)
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    return float(weights @ ranked / (n * total))
