"""The one-pass ranking kernel: every metric at every cutoff from one walk of each list.

Arrays in, arrays out, nothing raises. The kernel runs without numba's bounds checks:
it checks each truth row's span, each index and value and each list id as it reads
them, before any is used as an index, and stops at the first that the facade's input
scans refuse (returning BAD_INPUT). So `fastrank.evaluate` skips those scans where this
walk reads every entry and id (`engine.Plan.checks_in_walk`), and runs them only to
name the error; other callers scan first, and the walk's checks never fire.

Layout of the work: users (top-K rows) are split into `n_chunks` contiguous ranges and
the ranges run under `prange`, in the driver that every walk of `frames` shares
(`frames.run_ranges`, which hands the walk its arguments in a frame). Each range has
its own part of a scratch that the facade allocates once (`scratch`): per item one int64
in `mark`, a stamp and where the item's entry lies in its row (see below), a buffer for
sorting a row's relevance values, the block's tables, a memo of graded ideals (`rank_rows`
describes it). Nothing is allocated per user.

Within a range, rows go by blocks of `_BLOCK`: the walk of each row (its sums kept at
each cutoff), the graded ideal of each row with a hit, then the block's slots, a slot at
a time, all written out in the one walk function (`rank_rows` says why).

Membership by stamps: for the top-K row `i`, `tag = 2 * (i - lo + 1)` (lo: the range's
first row) goes into the high 32 bits of mark[item] for every relevant item of the row,
with the entry's offset in the truth row (j - start) in the low 32 bits, and `tag + 1`
for every item the walk has already seen. Stamps of earlier rows never equal either tag,
so the marker array needs no clearing between users; seen items make duplicates in a list
count once; a hit reads its value from the truth row (data[start + offset]), which the
walk has just read. One int64 an item, where a stamp and the value took two float64s:
the lookups are random reads, and half the footprint stays in the core's caches (the
membership bound of bench/read_floor.py, 1M users: 16% less time with 20k items, 37%
with 200k, 11% with 2M; 2026-11-27). The facade keeps a range under 2^30 rows (the tags
fit 31 bits) and a catalogue under 2^32 items (a canonical row's offsets fit 32 bits).

Each user writes only its own column of `out`; means are taken by the facade, so the
values are bit-identical for any thread count.
"""

import math

import numpy as np

from . import codes
from .compare import greater, lesser
from .frames import bounds, integer, matrix, offsets, segment, strided, table, vector
from .jit import njit
from .sorting import SMALL, sort_top


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _ratio(num, den):
    if den > 0:
        return num / den
    return 0.0


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _auc(auc_sum, hits, misses, m, n_items):
    """auc@k of a user with m relevant items of n_items, from its list's walk: `hits`
    and `misses` (distinct ids), and auc_sum, the hits ranked above each miss. The
    negatives outside the list rank below every item in it, and below or level with
    (half) the relevant items outside it."""
    n_neg = n_items - m
    if m == 0:
        return 0.0
    if n_neg == 0:
        return 1.0
    return (auc_sum + (hits + m) / 2.0 * (n_neg - misses)) / (m * np.float64(n_neg))


# Rows whose relevant values are all whole grades up to this are ranked by counting the
# grades (in the block's ideals): the usual case of ratings and judgement scales.
_TOP_GRADE = 15


# Exponential gains 2^rel - 1 overflow past rel = 1024 (and their sums earlier): a user
# whose largest grade exceeds this has every gain scaled by 2^-(largest - _EXP_TOP), the
# same factor in the DCG and its ideal, so ndcg_exp is unchanged and finite.
_EXP_TOP = 512.0
# Linear gains past this (their sums could overflow) are scaled by a power of two, which
# is exact: the nDCG ratio is the same to the bit, and dcg@k is scaled back. So are the
# gains of a user whose largest is below _LIN_LOW: times the discounts, they would fall
# among the subnormal numbers and lose their digits (a grade of 5e-324 gave ndcg 1).
_LIN_TOP = 2.0 ** 512
_LIN_LOW = 2.0 ** -512


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _exp_gain(v, shift):
    """(2^v - 1) / 2^shift, computed without overflow for v <= shift + _EXP_TOP."""
    return 2.0 ** (v - shift) - 2.0 ** (-shift)


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _gain_scaling(top):
    """(shift, scale) of a user whose largest grade is `top`: exponential gains are
    computed as (2^v - 1) / 2^shift and linear ones times scale (see _EXP_TOP, _LIN_TOP).
    Called, not copied in: it takes no array, so a call costs no reference counting."""
    shift = greater(top - _EXP_TOP, 0.0)  # 0: the plain gains 2^rel - 1
    scale = 1.0
    if top > _LIN_TOP or top < _LIN_LOW:  # largest gain times scale in [0.5, 1)
        scale = 2.0 ** np.float64(lesser(np.int64(-math.frexp(top)[1]), np.int64(1023)))
    return shift, scale


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _stop_chance(v, top):
    """ERR's chance that a user stops at an item of grade v: (2^min(v, top) - 1) / 2^top."""
    return (2.0 ** (lesser(v, top) - top)) - 2.0 ** -top


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _ideal_err(buf, length, top):
    """ERR of the ideal list: the user's first `length` values of buf, largest first."""
    total = 0.0
    going = 1.0
    for j in range(length):
        chance = _stop_chance(buf[j], top)
        total += going * chance / (j + 1.0)
        going *= 1.0 - chance
    return total


# The walk's sums at a cutoff, snap[b * n_cut + c, sum] for row b of the block and cutoff c
# (all float64: the counts are exact in it), and its per-user values, user[b, value] (m
# comes from n_relevant).
_HITS, _MISSES, _FIRST_HIT, _SUM_PREC, _DCG_LIN, _DCG_EXP, _DCG_BIN, _CG, _AUC_SUM = range(9)
_N_SUMS = 9
_R_HITS, _SCALE, _SHIFT, _TOP, _ALL_HITS = range(5)
_N_USER = 5

# Rows of a block: the walk fills the block's ideals and sums, then its slots are
# written.
_BLOCK = 256

# The pieces of a range's float64 scratch, in order (`scratch` lays them out), and _END,
# the float64s of a range in all.
(_BUF, _SPARE, _IDEAL_LIN, _IDEAL_EXP, _IDEAL_FULL, _SNAP, _USER, _IDEAL_ERR, _HIT_AT,
 _HIT_VALUE, _MEMO, _END) = range(12)

# The memo of graded ideals (see rank_rows): at most this many float64s a range (256 KiB,
# within a core's L2) and this many entries; none with fewer than _MEMO_LEAST entries...
_MEMO_FLOATS = 1 << 15
_MEMO_MOST = 1 << 12
_MEMO_LEAST = 1 << 4
# ... nor where an entry would hold more than this many float64s (curves at every cutoff:
# copying the ideal's sums costs more than summing them)
_MEMO_WIDEST = 32
# A memo key counts a row's grades in 4 bits each (grade g at bit 4g, one int64): rows of
# more relevant values than this are not memoised.
_MEMO_ROW = 15
# Calls of fewer top-K rows use the walk without the memo (and without the classic codes'
# own slot loops): they save about 30 and 6 ns a row, not worth the 0.25-0.3 s and the
# 0.2-0.5 s they add to the walk's first compile below this.
MEMO_ROWS = 1 << 18
# a grade is counted as min(v, this), whole only for v in 1.._TOP_GRADE
_PAST_GRADES = _TOP_GRADE + 0.5
# odd multiplier of the memo's hash (2^64 / golden ratio)
_MIX = np.int64(-7046029254386353131)


# what a walk without the sort returns at a row that needs it (see rank_rows)
NEEDS_SORT = np.int64(2)
# what the walk returns at the first row that holds what the input scans refuse: an
# indptr step that decreases or leaves the entries, an index outside [0, n_items) or
# indices that do not strictly increase, a value that is not finite, a list id outside
# [-1, n_items) in the columns it walks (every row's, counted or not; the columns past
# the largest cutoff are the facade's to scan). An index or id out of range, a NaN or a
# -inf returns at once, an order or a +inf at the row's end. (A spare item past the
# catalogue for the ids out of range, so that no loop has a second exit, made the walk
# 10-20% slower on one thread, the truth loop most; a loop of its own to check ids that
# the walk does not rank cost 0.1 s of its first compile.)
BAD_INPUT = np.int64(3)


def may_need_sort(values):
    """Whether the ranking walk should sort rows rather than count their grades, as the
    first up to 65,536 relevance values suggest (a fraction, or a grade past _TOP_GRADE):
    the walk without the sort says so if the guess was wrong."""
    head = values[:1 << 16]
    head = head[head > 0]
    return bool(((head != np.floor(head)) | (head > _TOP_GRADE)).any())


def memo_entries(n_cut, n_slots, need_ideal):
    """Entries of a range's memo of graded ideals (see rank_rows): a power of two, each
    entry memo_width(n_cut, n_slots) float64s and an int64 key; 0 (no memo) where the
    walk keeps no graded ideal or an entry is wide (curves: many cutoffs)."""
    if not need_ideal or memo_width(n_cut, n_slots) > _MEMO_WIDEST:
        return 0
    most = min(_MEMO_MOST, _MEMO_FLOATS // memo_width(n_cut, n_slots))
    entries = 1 << max(most, 1).bit_length() - 1
    return entries if entries >= _MEMO_LEAST else 0


def memo_width(n_cut, n_slots):
    """float64s of a memo entry, a row's ideals: the ideal's linear DCG at each cutoff
    (at c), its exponential DCG (n_cut + c), the uncut ideal (2 * n_cut), nERR's ideal
    ERR of each slot s (2 * n_cut + 1 + s)."""
    return 2 * n_cut + 1 + n_slots


def scratch(n_rows, n_chunks, n_items, kept, n_cut, n_slots, k_max, n_memo, params):
    """(floats, ints, at, n_block): the scratch of every range of rank_rows, allocated by
    the facade at once (zeroed, as the walk's stamps, grade counts and memo keys need),
    and what the walk reads it by. A range's float64 scratch is floats[c * at[_END]:]
    [:at[_END]], its pieces at the offsets `at` (_BUF, ...); its int64 scratch is
    ints[c * int_stride(n_items, n_memo, n_block):], the stamps (`mark`, n_items), the
    grade counts (16), the memo's keys, then the block's rows that need an ideal. The hits
    of a block's rows (hit_at, hit_value) are kept only by the walk with `params`. Plain
    numpy: numba compiled an implementation of np.empty per signature for the walk's
    allocations, 0.25 s of a first call."""
    n_block = max(min(_BLOCK, -(-n_rows // max(n_chunks, 1))), 1)
    hit_rows = n_block * max(k_max, 1) if params else 1
    lengths = [max(kept, 1), SMALL, n_block * n_cut, n_block * n_cut,
               n_block, n_block * n_cut * _N_SUMS, n_block * _N_USER, n_block * n_slots,
               hit_rows, hit_rows, n_memo * memo_width(n_cut, n_slots)]
    at = offsets(lengths)  # ranges a whole number of cache lines apart
    floats = np.zeros(n_chunks * int(at[_END]), np.float64)
    ints = np.zeros(n_chunks * int_stride(n_items, n_memo, n_block), np.int64)
    return floats, ints, at, n_block


def int_stride(n_items, n_memo, n_block):
    """The int64s of a range's scratch (see scratch), which the walk finds as
    len(ints) // n_chunks: the stamps, the grade counts, the memo's keys, the block's
    pending rows, rounded up to a cache line so that ranges share none."""
    return (n_items + _TOP_GRADE + 1 + n_memo + n_block + 7) // 8 * 8


# the low 32 bits of a stamp: the entry's offset in its truth row
_OFFSET = np.int64(0xFFFFFFFF)
# the most rows of a range (the tags of its stamps fit 31 bits) and items (the offsets of
# a canonical row fit 32 bits): the facade keeps within them
RANGE_ROWS = (1 << 30) - 1
MOST_ITEMS = 1 << 32


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _param_slots(out, block, block_end, counted, slot_code, slot_cut, slot_param, cutoffs,
                 hit_at, hit_value, user, ideal_err):
    """The slots of codes with a parameter of the counted rows of a block, from the walk's
    hits of row b of the block (user[b, _ALL_HITS] of them; hit_at[b]: their 0-based
    positions, hit_value[b]: their values): ERR and nERR (the cascade), RBP and its
    residual ((1 - p)·p^position). ideal_err[b, s]: nERR's ideal ERR (found with the
    block's ideals). Kept out of the walk, which the classic codes share; called once a
    block, so that its arrays' reference counts cost nothing."""
    for i in range(block, block_end):
        if not counted[i]:
            continue
        b = i - block
        hits = np.int64(user[b, _ALL_HITS])
        for s in range(slot_code.shape[0]):
            code = slot_code[s]
            if code < codes.ERR:
                continue
            k = cutoffs[slot_cut[s]]
            q = slot_param[s]
            total = 0.0
            going = 1.0
            for h in range(hits):
                p = hit_at[b, h]
                if p >= k:
                    break
                if code == codes.ERR or code == codes.NERR:
                    chance = _stop_chance(hit_value[b, h], q)
                    total += going * chance / (p + 1.0)
                    going *= 1.0 - chance
                else:
                    total += (1.0 - q) * q ** p
            if code == codes.NERR:
                total = _ratio(total, ideal_err[b, s])
            elif code == codes.RBP_RESID:
                total = 1.0 - total
            out[s, i] = total


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _other_slots(out, s, code, k, q, c, n_cut, block, block_end, counted, n_relevant, snap,
                 user, ideal_full, ideal_exp):
    """Slot s, of a code outside `codes.CORE` (and below ERR), of the counted rows of a
    block, from the walk's sums at the slot's cutoff k (index c), the rows' values and
    their ideals: the walk's second step for these codes. A function of its own, so that
    the walk of the core codes has none of this in its source (numba's passes before it
    drops a constant's dead branches cost as much as the code); called once a slot and
    block, so that its arrays' reference counts cost nothing."""
    for i in range(block, block_end):
        if not counted[i]:
            continue
        b = i - block
        row = b * n_cut + c
        m = n_relevant[i]
        mf = np.float64(m)
        hits = snap[row, _HITS]
        if code == codes.NDCG_UNCUT:
            val = _ratio(snap[row, _DCG_LIN], ideal_full[b])
        elif code == codes.NDCG_EXP:
            val = _ratio(snap[row, _DCG_EXP], ideal_exp[b, c])
        elif code == codes.DCG:
            # exact: scale is a power of two (inf past float64)
            val = snap[row, _DCG_LIN] / user[b, _SCALE]
        elif code == codes.CG:
            val = snap[row, _CG]
        elif code == codes.R_PRECISION:
            val = _ratio(user[b, _R_HITS], mf)
        # the codes added with the registry come last: the classic ones pay no test for them
        elif code == codes.HITS:
            val = hits
        elif code == codes.RETRIEVED:
            val = hits + snap[row, _MISSES]
        elif code == codes.N_RELEVANT:
            val = mf
        elif code == codes.F_BETA:
            b2 = q * q
            val = _ratio((1.0 + b2) * hits, b2 * m + k)
        elif code == codes.HIT_SHARE:
            val = _ratio(hits, hits + snap[row, _MISSES])
        elif code == codes.DCG_EXP:
            # undoes the scaling of grades above 512; 0 (no hit before k) stays 0, whatever
            # the scaling the row's later hits set; past a shift of 1023, 2^shift is inf
            # and is applied in two halves
            total = snap[row, _DCG_EXP]
            undo = 2.0 ** user[b, _SHIFT]
            if total == 0.0:
                val = 0.0
            elif undo < np.inf:
                val = total * undo
            else:
                half = 2.0 ** (user[b, _SHIFT] / 2.0)
                val = total * half * half
        else:  # no other code is given (the engine builds the slots from the registry)
            val = np.nan
        out[s, i] = val


def rank_rows(params, sorting, pointer_type, index_type, value_type, topk_type, row_type,
              memo=False, extended=True):
    """The walk (`frames.run_ranges`) that fills out[s, i] with slot s of top-K row i,
    n_relevant[i] = m and counted[i] = 1 or 0, for the rows of one range, with its own
    part of the scratch; returns 1. Frame, in order:

    indptr, indices, data: the CSR truth, canonical (no duplicate entries) unless it returns
    BAD_INPUT, of the closure's pointer_type, index_type and value_type (int32 or int64,
    float32 or float64). topk: (n_rows, W) item ids of topk_type, -1 for padding; rows: the
    truth row of each top-K row (row_type). n_items. cutoffs: sorted distinct cutoffs >= 1;
    a cutoff past the W columns sees empty slots after them. slot_code / slot_cut /
    slot_param: per output slot, a code of `codes`, an index into cutoffs and a parameter
    (float64). count_judged: count users with at least one stored entry (trec) instead of at
    least one relevant entry. disc[j] = 1/log2(j+2), for j below W and below min(largest
    cutoff, kept), or kept if an uncut ideal is requested. kept: the most relevance values
    of a row the walk keeps (buf): the longest row's for a walk that sorts or an uncut
    ideal, else at least min(largest cutoff, longest row). out (rows may be a stride apart),
    n_relevant, counted (uint8). need_ideal, need_full, need_exp: what the walk keeps for
    these slots (`fastrank.ranking_pass.walk_needs`): a graded ideal (the row's values, largest
    first), that ideal uncut (over all m values), exponential gains. ideal_bin =
    cumsum(disc): the binary ideal at j + 1 relevant items.

    `params` (a constant of the closure, so numba drops the other branch before typing)
    says whether the walk keeps its hits for the codes with a parameter (ERR, nERR, RBP:
    `_param_slots`): the kernel of the other codes never compiles them, and leaves those
    slots unwritten. `sorting` says whether it can sort a row's values for the graded
    ideal (`sort_top`, a seventh of its first compile): rows of whole grades up to
    _TOP_GRADE are counted, rows of one value need neither, and a walk without the sort
    returns NEEDS_SORT at the first other row it meets (the facade then runs the walk
    with it, on fresh scratch; `may_need_sort` says which to try first). `memo`, a third
    constant, makes the walk of large calls (`MEMO_ROWS`), which alone repay what it adds
    to the first compile: the memo of graded ideals described below (0.25-0.3 s), and
    loops of their own for the slots of precision, MAP (capped) and nDCG (0.2-0.5 s; a
    tenth of the classic four's walk, where the loop of every code reloads from the
    stack, past a jump table, what a large function cannot keep in registers).
    `extended`, a fourth, makes the walk of the codes outside `codes.CORE`: their sums
    (exponential gains, the uncut ideal, R-precision's hits) and their slots
    (`_other_slots`). The walk of the core codes alone, what the classic metrics and
    implicit's four ask, compiles in a quarter less time (1.7 against 2.3 s).

    The rows go by blocks of _BLOCK, each in three steps written out in this one function:
    the walk of each row (its sums kept at each cutoff), the graded ideal of each row with
    a hit, the block's slots, a slot at a time. The ideal is found only for a row with a
    hit: the DCG of a row without one is 0 at every cutoff, its nDCG 0 whatever the ideal
    (0 / x is 0 to the bit for x >= 0, and _ratio gives 0 for 0 / 0). Its pass over the
    row's values (the extremes, whether all are whole grades, the memo's key) reads them
    from the cache, the block's rows being recent. In the stamping loop, for every row,
    that work cost 15 of the classic four's 79 ms a million rows on one thread with few
    hits; inside the loop of the rows, after their walk, the ideal's code (the memo's most)
    made the rows without a hit 10-20% slower (2026-11-27). No function that takes arrays is
    called per user: numba counts references to the arrays of a called function with an
    atomic increment and decrement, which cost a third of the walk's time. (LLVM does not
    inline numba's calls of other kernels here: each costs numba's calling convention. So
    the sums at a cutoff are written out in the walk, and a row's gain scaling
    (_gain_scaling) is found at its first hit, not for every row; with AUC's loop of its
    own, 9-13% of the classic four's time, 2026-11-28. `greater` stays called for a row's
    largest value: written out, the max became a branch that mispredicts on mixed grades,
    6-12% slower, and as the builtin max the walk was no faster, 2026-11-27; checking for
    an infinity at each value instead, and a row's largest value found again at its first
    hit, made it no faster; one unsigned comparison for an index's range, 4% slower. In
    the release build `greater` is inlined, a `vmaxsd`: a profile of a build with
    NUMBA_DEBUGINFO shows it called, as numba's calls of small kernels stay calls there,
    and that build runs the walk 75% slower.) A truth entry's index j is unsigned where
    the walk reads it: numba adds a negative index's wraparound to every signed index
    LLVM cannot prove non-negative, and a row's start is checked but not known to LLVM
    (five instructions of the stamping loop's 27); AUC's count of hits above each miss is
    an int64, not a chain of float additions. Together 3-5% of the classic four on one
    thread, the same to the bit, 2026-11-28. (Checking only a row's last index against
    n_items, each index then against the one before it, was no faster.) The
    steps
    are not functions of their own: as `inline="always"` functions numba copied their code
    into the walk at a cost of 0.5 s of a first call (it deep-copies a callee's IR once per
    block of it), and as called functions the walk of 200 cutoffs ran 6% slower.

    The scratch is allocated by the facade for every range at once (`scratch`) and read
    through views (`frames.segment`, `frames.table`): the walk allocates nothing, where
    each distinct signature of np.empty in it compiled an implementation of its own on a
    first call. (2-D tables stay 2-D: indexed by hand as 1-D, every access paid numba's
    check for a negative index: 4% more instructions.) Frame slots 20 to 24: the float64
    and int64 scratch, the offsets of its pieces, the rows of a block, the entries of the
    memo (`memo_entries`).

    The memo of graded ideals: a row of at most _MEMO_ROW relevant values, all whole
    grades up to _TOP_GRADE, has the ideal of every row with as many values of each grade
    (its scale is 1), so a range computes the ideal of each such count once and copies
    it to later rows, the same to the bit: rows of ratings repeat few counts. The key
    counts each grade in 4 bits (grade g at bit 4g; the count of grade 0, never stored,
    is 1 to mark a used entry); an entry per hash holds the last key's ideals, and a
    mismatch only recomputes. An entry (`memo_width`) is read from the int64 and float64
    scratch by hand: new array types compile their accesses anew. Outside the memo (a
    miss, or a walk without it), a row's ideal is written from the key's counts; rows of
    one value need no order, and longer rows of whole grades count theirs again. Keys of
    two words for longer rows (8 bits a grade, cut to the largest cutoff) cost 0.5 s of
    the first compile."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, error_model="numpy", no_cpython_wrapper=True, array_expressions=False)
    def rank_rows(chunk, n_chunks, frame):
        indptr = vector(frame, 0, pointer_type)
        indices = vector(frame, 1, index_type)
        data = vector(frame, 2, value_type)
        topk = matrix(frame, 3, topk_type)
        rows = vector(frame, 4, row_type)
        n_items = integer(frame, 5)
        cutoffs = vector(frame, 6, np.int64)
        slot_code = vector(frame, 7, np.int64)
        slot_cut = vector(frame, 8, np.int64)
        slot_param = vector(frame, 9, np.float64)
        count_judged = integer(frame, 10)
        disc = vector(frame, 11, np.float64)
        kept = integer(frame, 12)
        out = strided(frame, 13, np.float64)
        n_relevant = vector(frame, 14, np.int64)
        counted = vector(frame, 15, np.uint8)
        need_ideal = integer(frame, 16)
        need_full = integer(frame, 17)
        need_exp = integer(frame, 18)
        ideal_bin = vector(frame, 19, np.float64)
        n_rows = topk.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        floats = vector(frame, 20, np.float64)  # every range's scratch (SCRATCH)
        ints = vector(frame, 21, np.int64)
        at = vector(frame, 22, np.int64)        # where each piece starts in a range's
        n_block = integer(frame, 23)            # rows of a block (at most)
        n_memo = integer(frame, 24)             # entries of the memo of ideals (or 0)
        n_slots = slot_code.shape[0]
        n_cut = cutoffs.shape[0]
        n_entries = indices.shape[0]
        k_max = lesser(topk.shape[1], cutoffs[n_cut - 1])  # the positions walked
        own = chunk * at[_END]  # where this range's scratch starts
        buf = segment(floats, own + at[_BUF], greater(kept, np.int64(1)))
        spare = segment(floats, own + at[_SPARE], np.int64(SMALL))  # sort_top's values
        ideal_lin = table(floats, own + at[_IDEAL_LIN], n_block, n_cut)  # block's ideals
        ideal_exp = table(floats, own + at[_IDEAL_EXP], n_block, n_cut)
        ideal_full = segment(floats, own + at[_IDEAL_FULL], n_block)
        ideal_err = table(floats, own + at[_IDEAL_ERR], n_block, n_slots)  # nERR's
        width = 2 * n_cut + 1 + n_slots  # a memo entry (memo_width)
        snap = table(floats, own + at[_SNAP], n_block * n_cut, np.int64(_N_SUMS))  # sums
        user = table(floats, own + at[_USER], n_block, np.int64(_N_USER))  # r_hits, ...
        # the hits of each row of the block (their positions, their values), for params
        hit_rows = n_block if params else np.int64(1)
        hit_cols = greater(k_max, np.int64(1)) if params else np.int64(1)
        hit_at = table(floats, own + at[_HIT_AT], hit_rows, hit_cols)
        hit_value = table(floats, own + at[_HIT_VALUE], hit_rows, hit_cols)
        own_ints = chunk * (ints.shape[0] // n_chunks)  # a range's int64s (int_stride)
        mark = segment(ints, own_ints, n_items)  # per item: a stamp (see the module)
        counts = segment(ints, own_ints + n_items, np.int64(_TOP_GRADE + 1))
        keys_at = own_ints + n_items + _TOP_GRADE + 1  # the memo's keys and entries
        pending = segment(ints, keys_at + n_memo, n_block)  # the block's rows with a hit
        memo_at = own + at[_MEMO]
        for block in range(lo, hi, n_block):
            block_end = lesser(block + n_block, hi)

            # The walk of each row: membership by stamps (see the module's docstring),
            # the sums kept at each cutoff in snap; the rows with a hit are listed for
            # their graded ideal.
            n_pending = np.int64(0)
            for i in range(block, block_end):
                b = i - block
                tag = 2 * (i - lo + 1)  # the row's stamps (see the module's docstring)
                stamp = tag << 32
                seen = (tag + 1) << 32
                r = rows[i]
                start = indptr[r]
                end = indptr[r + 1]
                if start < 0 or end < start or end > n_entries:  # see BAD_INPUT
                    return BAD_INPUT
                m = np.int64(0)
                top = 0.0
                previous = np.int64(-1)
                odd = np.bool_(False)  # indices out of order (or repeated): see BAD_INPUT
                for j in range(start, end):
                    at_j = np.uint64(j)  # j >= 0 (start is checked): no wraparound
                    item = np.int64(indices[at_j])
                    if item < 0 or item >= n_items:
                        return BAD_INPUT
                    odd |= item <= previous
                    previous = item
                    v = data[at_j]
                    if v > 0.0:
                        mark[item] = stamp | (j - start)
                        m += 1
                        top = greater(top, v)
                    elif not v > -np.inf:  # NaN or -inf (an infinity above ends in top)
                        return BAD_INPUT
                if odd or top == np.inf:
                    return BAD_INPUT
                n_relevant[i] = m
                if count_judged:
                    is_counted = end > start
                else:
                    is_counted = m > 0
                if is_counted:
                    counted[i] = 1
                else:  # its list is walked all the same: its ids are checked there
                    counted[i] = 0
                    for s in range(n_slots):
                        out[s, i] = np.nan

                hits = np.int64(0)
                misses = np.int64(0)
                first_hit = np.int64(0)
                r_hits = np.int64(0)
                sum_prec = 0.0
                dcg_lin = 0.0
                dcg_exp = 0.0
                dcg_bin = 0.0
                cg = 0.0
                auc_sum = np.int64(0)  # exact, as its float64 sum was
                # a row's gain scaling (_gain_scaling) is found at its first hit: without
                # one its sums are 0, which any scaling leaves 0
                shift = 0.0
                scale = 1.0
                c = np.int64(0)
                next_cut = cutoffs[0]  # the next cutoff the walk reaches
                r_rank = lesser(m, k_max)  # R-precision's hits: at rank m, or the list's end
                for p in range(k_max):
                    item = topk[i, p]
                    if item >= 0:
                        if item >= n_items:
                            return BAD_INPUT
                        st = mark[item]
                        if st >> 32 == tag:  # relevant, first time in this list
                            mark[item] = seen
                            hits += 1
                            sum_prec += hits / (p + 1.0)
                            if first_hit == 0:
                                first_hit = p + 1
                                shift, scale = _gain_scaling(top)
                            v = np.float64(data[np.uint64(start + (st & _OFFSET))])
                            d = disc[p]
                            dcg_lin += v * scale * d
                            if extended and need_exp:  # see `extended`
                                dcg_exp += _exp_gain(v, shift) * d
                            dcg_bin += d
                            cg += v
                            if params:
                                hit_at[b, hits - 1] = p
                                hit_value[b, hits - 1] = v
                        elif st >> 32 != tag + 1:  # not relevant, first time in this list
                            mark[item] = seen
                            misses += 1
                            auc_sum += hits
                        # else: a repeated id; counts for nothing
                    elif item != -1:
                        return BAD_INPUT
                    rank = p + 1
                    if extended and rank == r_rank:
                        r_hits = hits
                    # the sums at each cutoff (distinct: one at most per rank), and at the
                    # last rank walked at every cutoff past it (past the list's columns);
                    # written out here, not a call per row
                    if rank == next_cut or rank == k_max:
                        last = n_cut if rank == k_max else c + 1
                        while c < last:
                            row_c = b * n_cut + c
                            snap[row_c, _HITS] = hits
                            snap[row_c, _MISSES] = misses
                            snap[row_c, _FIRST_HIT] = first_hit
                            snap[row_c, _SUM_PREC] = sum_prec
                            snap[row_c, _DCG_LIN] = dcg_lin
                            snap[row_c, _DCG_EXP] = dcg_exp
                            snap[row_c, _DCG_BIN] = dcg_bin
                            snap[row_c, _CG] = cg
                            snap[row_c, _AUC_SUM] = auc_sum
                            c += 1
                        next_cut = cutoffs[c] if c < n_cut else np.int64(-1)
                while c < n_cut:  # no rank walked (a list of no columns): every sum 0
                    for q in range(_N_SUMS):
                        snap[b * n_cut + c, q] = 0.0
                    c += 1
                user[b, _R_HITS] = r_hits
                user[b, _SCALE] = scale
                user[b, _SHIFT] = shift
                if params:
                    user[b, _ALL_HITS] = hits
                # Only rows with a hit (so counted) need a graded ideal: the others'
                # slots divide 0. They are found after the block's walk, which then
                # keeps this loop small (the memo's code in it made rows without a hit
                # 10-20% slower).
                if need_ideal and hits > 0:
                    user[b, _TOP] = top  # read by the ideal's loop only
                    pending[n_pending] = i
                    n_pending += 1

            # The graded ideal DCG sums of each row of the block with a hit (its top,
            # scale and shift from the user table, its truth row again from the cache),
            # its relevant values largest first: ideal_lin[b, c] (linear gains times the
            # user's scale; and ideal_exp[b, c] if need_exp, gains scaled by 2^-shift) is
            # the ideal list cut at min(cutoffs[c], m); with need_full, ideal_full[b] is
            # the linear ideal over all m values; with params, ideal_err[b, s] the ideal
            # ERR of each nERR slot s. The memo (see the docstring) gives those of rows of
            # up to _MEMO_ROW grades. buf gets the values, largest first, as far as needed.
            for q in range(n_pending):
                i = pending[q]
                b = i - block
                r = rows[i]
                start = indptr[r]
                end = indptr[r + 1]
                m = n_relevant[i]
                top = user[b, _TOP]
                scale = user[b, _SCALE]
                shift = user[b, _SHIFT]
                low = np.inf
                whole = np.bool_(True)  # whole grades 1.._TOP_GRADE
                key = np.int64(1)  # the grades' counts, 4 bits each (1: a used entry)
                for j in range(start, end):  # the row again, from the cache
                    v = data[np.uint64(j)]  # j >= 0: no wraparound (as in the walk)
                    if v > 0.0:  # no branches: mixed grades would mispredict
                        low = lesser(low, v)
                        grade = np.int64(lesser(v, _PAST_GRADES))
                        whole &= np.float64(grade) == v
                        key += np.int64(1) << (grade << 2)
                limit = m if extended and need_full else cutoffs[n_cut - 1]
                length = lesser(m, limit)
                slot = np.int64(-1)  # the row's memo entry, if it has one
                known = False  # found in the memo
                if low == top:  # one value (a hit: m >= 1): no order to find
                    for j in range(length):
                        buf[j] = top
                elif whole:
                    if memo and n_memo > 0 and m <= _MEMO_ROW:  # memo: as params
                        slot = (key * _MIX >> 40) & (n_memo - 1)
                        if ints[keys_at + slot] == key:
                            known = True
                            entry = memo_at + slot * width
                            for c in range(n_cut):
                                ideal_lin[b, c] = floats[entry + c]
                                ideal_exp[b, c] = floats[entry + n_cut + c]
                            ideal_full[b] = floats[entry + 2 * n_cut]
                            if params:
                                for s in range(n_slots):
                                    ideal_err[b, s] = floats[entry + 2 * n_cut + 1 + s]
                    if not known:
                        # whole grades 1..top, written back largest first from
                        # their counts: the key's for up to _MEMO_ROW values, else
                        # counted again (a call per row cost as much as the counting)
                        if m > _MEMO_ROW:
                            for j in range(start, end):
                                if data[j] > 0.0:
                                    counts[np.int64(data[j])] += 1
                        pos = np.int64(0)
                        for g in range(np.int64(top), 0, -1):
                            if m > _MEMO_ROW:
                                n_grade = counts[g]
                                counts[g] = 0  # left zeroed for the next row
                            else:
                                n_grade = (key >> (g << 2)) & 15
                            stop = lesser(pos + n_grade, length)
                            for j in range(pos, stop):
                                buf[j] = g
                            pos = stop
                elif sorting:  # a constant of the closure, like params
                    n_buf = np.int64(0)
                    for j in range(start, end):
                        if data[j] > 0.0:
                            buf[n_buf] = data[j]
                            n_buf += 1
                    length = sort_top(buf, m, limit, spare)
                else:  # a walk without the sort: the facade runs the one with it
                    return NEEDS_SORT
                if not known:
                    acc_lin = 0.0
                    acc_exp = 0.0
                    j = 0
                    for c in range(n_cut):  # each cutoff sees the ideal cut at it
                        stop = lesser(cutoffs[c], length)
                        while j < stop:
                            v = buf[j]
                            acc_lin += v * scale * disc[j]
                            if extended and need_exp:
                                acc_exp += _exp_gain(v, shift) * disc[j]
                            j += 1
                        ideal_lin[b, c] = acc_lin
                        ideal_exp[b, c] = acc_exp
                    if extended:  # the uncut ideal: the values past the last cutoff
                        while j < length:
                            acc_lin += buf[j] * scale * disc[j]
                            j += 1
                    ideal_full[b] = acc_lin
                    if params:  # a constant of the closure: the plain kernel has no ERR
                        for s in range(n_slots):
                            if slot_code[s] == codes.NERR:
                                ideal_err[b, s] = _ideal_err(
                                    buf, lesser(cutoffs[slot_cut[s]], m), slot_param[s])
                    if memo and slot >= 0:  # remembered for the rows of the same key
                        ints[keys_at + slot] = key
                        entry = memo_at + slot * width
                        for c in range(n_cut):
                            floats[entry + c] = ideal_lin[b, c]
                            floats[entry + n_cut + c] = ideal_exp[b, c]
                        floats[entry + 2 * n_cut] = ideal_full[b]
                        if params:
                            for s in range(n_slots):
                                floats[entry + 2 * n_cut + 1 + s] = ideal_err[b, s]

            if params:  # a constant of the closure: the plain kernel has no ERR
                _param_slots(out, block, block_end, counted, slot_code, slot_cut,
                             slot_param, cutoffs, hit_at, hit_value, user, ideal_err)

            # Then every slot of the block's counted rows, from the walk's sums at the slot's
            # cutoff and the rows' values, a slot at a time so that each row of `out` is
            # written in order. slot_param[s] is the registry entry's `kernel_param`, for
            # codes that take one. The codes of per-slot sums (ERR, RBP) were written with
            # the block's ideals (_param_slots).
            for s in range(n_slots):
                code = slot_code[s]
                if code >= codes.ERR:
                    continue
                c = slot_cut[s]
                k = cutoffs[c]
                q = slot_param[s]
                # the classic codes in loops of their own, in the walk of large calls (the
                # memo's: they cost 0.2-0.5 s of its first compile, and save a tenth of its
                # time for the classic four); the same values as the loop of every code
                if memo and code == codes.PRECISION:
                    for i in range(block, block_end):
                        if counted[i]:
                            out[s, i] = snap[(i - block) * n_cut + c, _HITS] / k
                    continue
                if memo and code == codes.AP_CAPPED:
                    for i in range(block, block_end):
                        if counted[i]:
                            out[s, i] = _ratio(snap[(i - block) * n_cut + c, _SUM_PREC],
                                               np.float64(lesser(k, n_relevant[i])))
                    continue
                if memo and code == codes.NDCG:
                    for i in range(block, block_end):
                        if counted[i]:
                            b = i - block
                            out[s, i] = _ratio(snap[b * n_cut + c, _DCG_LIN], ideal_lin[b, c])
                    continue
                if memo and code == codes.AUC:
                    for i in range(block, block_end):
                        if counted[i]:
                            row = (i - block) * n_cut + c
                            out[s, i] = _auc(snap[row, _AUC_SUM], snap[row, _HITS],
                                             snap[row, _MISSES], n_relevant[i], n_items)
                    continue
                # a constant of the closure: the walk of the core codes has no other
                if extended and code >= 0 and (codes.CORE_BITS >> code) & 1 == 0:
                    _other_slots(out, s, code, k, q, c, n_cut, block, block_end, counted,
                                 n_relevant, snap, user, ideal_full, ideal_exp)
                    continue
                for i in range(block, block_end):
                    if not counted[i]:
                        continue
                    b = i - block
                    row = b * n_cut + c
                    m = n_relevant[i]
                    mf = np.float64(m)  # every _ratio takes two floats: one compiled version
                    hits = snap[row, _HITS]
                    if code == codes.PRECISION:
                        val = hits / k
                    elif code == codes.PRECISION_CAPPED:
                        val = _ratio(hits, np.float64(lesser(k, m)))
                    elif code == codes.RECALL:
                        val = _ratio(hits, mf)
                    elif code == codes.F1:
                        val = _ratio(2.0 * hits, np.float64(k + m))
                    elif code == codes.HIT_RATE:
                        val = 1.0 if hits > 0 else 0.0
                    elif code == codes.MRR:
                        first_hit = snap[row, _FIRST_HIT]
                        val = 1.0 / first_hit if first_hit > 0 else 0.0
                    elif code == codes.AP_CAPPED:
                        val = _ratio(snap[row, _SUM_PREC], np.float64(lesser(k, m)))
                    elif code == codes.AP_FULL:
                        val = _ratio(snap[row, _SUM_PREC], mf)
                    elif code == codes.NDCG:
                        val = _ratio(snap[row, _DCG_LIN], ideal_lin[b, c])
                    elif code == codes.NDCG_BINARY:
                        val = (_ratio(snap[row, _DCG_BIN], ideal_bin[lesser(k, m) - 1])
                               if m > 0 else 0.0)
                    elif code == codes.AUC:
                        val = _auc(snap[row, _AUC_SUM], hits, snap[row, _MISSES], m, n_items)
                    else:  # no other code reaches here (see `extended` above)
                        val = np.nan
                    out[s, i] = val
        return np.int64(1)

    return rank_rows


def relevant_counts(pointer_type, value_type, row_type):
    """The walk (`frames.run_ranges`) of what rank_rows writes besides its slots, for a
    call with no ranking slot (the trec_eval measures only), a fraction of its size.
    Frame: indptr, data (of the closure's types), rows (row_type), count_judged,
    n_relevant, counted (uint8). n_relevant[i] = m, the positive entries of truth row
    rows[i]; counted[i] = 1 if the row has an entry (count_judged) or a positive one."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, error_model="numpy", no_cpython_wrapper=True, array_expressions=False)
    def counts(chunk, n_chunks, frame):
        indptr = vector(frame, 0, pointer_type)
        data = vector(frame, 1, value_type)
        rows = vector(frame, 2, row_type)
        count_judged = integer(frame, 3)
        n_relevant = vector(frame, 4, np.int64)
        counted = vector(frame, 5, np.uint8)
        n_rows = rows.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        for i in range(lo, hi):
            r = rows[i]
            start = indptr[r]
            end = indptr[r + 1]
            m = np.int64(0)
            for j in range(start, end):
                if data[j] > 0.0:
                    m += 1
            n_relevant[i] = m
            if count_judged:
                counted[i] = 1 if end > start else 0
            else:
                counted[i] = 1 if m > 0 else 0
        return np.int64(1)

    return counts
