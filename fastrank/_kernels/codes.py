"""Integer codes of the per-user quantities the ranking kernel can write.

A *slot* of the kernel's output is one (code, cutoff) pair. The facade
(`fastrank.metrics`) maps a metric name and a convention to a code; the kernel
(`fastrank._kernels.ranking`) only knows codes. Plain module-level integers, so
that numba treats them as compile-time constants.
"""

PRECISION = 0          # hits / k
PRECISION_CAPPED = 1   # hits / min(k, m)   (implicit's per-user precision)
RECALL = 2             # hits / m
F1 = 3                 # harmonic mean of PRECISION and RECALL
HIT_RATE = 4           # 1 if hits > 0
MRR = 5                # 1 / rank of the first hit within k
AP_CAPPED = 6          # sum_i P@i rel(i) / min(k, m)
AP_FULL = 7            # sum_i P@i rel(i) / m
NDCG = 8               # linear gain, ideal of the user's row cut at k
NDCG_UNCUT = 9         # linear gain, ideal over all m relevant items
NDCG_EXP = 10          # gain 2^rel - 1, ideal cut at k
NDCG_BINARY = 11       # gain 1, ideal sum_{i <= min(k, m)} d(i)
DCG = 12               # linear gain, discounted
CG = 13                # linear gain, no discount
R_PRECISION = 14       # hits in the first m / m
AUC = 15               # implicit's top-k AUC
HITS = 16              # hits: relevant items in the first k
RETRIEVED = 17         # distinct real ids in the first k (no padding, no repeats)
N_RELEVANT = 18        # m
DCG_EXP = 19           # gain 2^rel - 1, discounted
F_BETA = 20            # (1 + b^2) P R / (b^2 P + R), b = slot_param
HIT_SHARE = 21         # hits / distinct real ids in the first k (judged@k on the stored view)
ERR = 22               # Σ R_i / i · Π_{j<i} (1 - R_j), R = (2^min(g, G) - 1) / 2^G, G = slot_param
NERR = 23              # ERR / the ideal ordering's ERR
RBP = 24               # (1 - p) Σ p^(i-1) rel(i), p = slot_param
RBP_RESID = 25         # 1 - RBP of the stored view: what unjudged ranks and ranks past k may add

# The codes of the ranking walk's core (`ranking.rank_rows`' `extended` False): the classic
# metrics and implicit's four. A call of these alone compiles a walk without the others'
# sums and slots, a quarter less to compile on a first call.
CORE = frozenset({PRECISION, PRECISION_CAPPED, RECALL, F1, HIT_RATE, MRR, AP_CAPPED, AP_FULL,
                  NDCG, NDCG_BINARY, AUC})
CORE_BITS = sum(1 << code for code in CORE)  # the walk's test: bit `code` set

# Codes of trec_eval's kernel (`fastrank._kernels.trec`), one per trec_eval measure.
TREC_NUM_RET = 0
TREC_NUM_REL = 1
TREC_NUM_REL_RET = 2
TREC_MAP = 3
TREC_RPREC = 4
TREC_BPREF = 5
TREC_RECIP_RANK = 6
TREC_NDCG = 7
TREC_IPREC = 8
TREC_P = 9
TREC_RECALL = 10
TREC_NDCG_CUT = 11
TREC_MAP_CUT = 12
TREC_SUCCESS = 13
TREC_INFAP = 14
TREC_RPREC_MULT = 15
TREC_UTILITY = 16
TREC_11PT_AVG = 17
TREC_BING = 18
TREC_G = 19
TREC_DCG = 20
TREC_IDEAL_DCG = 21
TREC_NDCG_REL = 22
TREC_RNDCG = 23
TREC_RELATIVE_P = 24
TREC_SET_P = 25
TREC_SET_RELATIVE_P = 26
TREC_SET_RECALL = 27
TREC_SET_MAP = 28
TREC_SET_F = 29
TREC_NUM_NONREL_JUDGED_RET = 30
TREC_YAAP = 31
TREC_RBP = 32
TREC_RBP_RESID = 33
TREC_UNJ = 34

# Codes of the debiased kernel (`fastrank._kernels.debiased`): inverse-propensity-weighted
# sums over the relevant items in the first k, over m (IPS) or over the user's weight (SNIPS).
RECALL_IPS = 0         # sum_hits w / m
RECALL_SNIPS = 1       # sum_hits w / sum_relevant w
DCG_IPS = 2            # sum_hits w d(rank) / m
DCG_SNIPS = 3          # sum_hits w d(rank) / sum_relevant w
AP_IPS = 4             # sum_hits w P@rank / m
AP_SNIPS = 5           # sum_hits w P@rank / sum_relevant w

# Fields of the intent-aware kernel's output (`fastrank._kernels.intents`), one per measure:
# the registry's code of each intent-aware metric.
IA_P = 0               # P-IA
IA_MAP = 1             # MAP-IA
IA_ALPHA_DCG = 2       # α-DCG
IA_ERR = 3             # ERR-IA
IA_NERR = 4            # nERR-IA (needs the greedy ideal)
IA_CORE = 5            # the fields of the walk made without novelty (S-recall, NRBP)
IA_ST_RECALL = 5       # S-recall
IA_NRBP = 6            # NRBP
IA_NNRBP = 7           # nNRBP (needs the uncut ideal)
IA_FIELDS = 8

# Kinds of the partial-AUC kernel (`fastrank._kernels.auc`).
PARTIAL_AUC = 0        # pAUC@k: k counts non-relevant items, over k·m
PAP = 1                # pAp@k: the first k hits, over k·min(k, m)
