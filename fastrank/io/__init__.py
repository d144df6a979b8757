"""Real inputs: TREC files, data frames and the files `fastrank evaluate` reads.

Reach it as `fr.io` after `import fastrank as fr` (loaded on first use); `from fastrank
import io` works too but hides the standard library's `io` in that module.

    qrels, run = fastrank.io.read_qrels("qrels.txt"), fastrank.io.read_run("run.txt")
    truth, topk, queries, documents = fastrank.io.trec_arrays(qrels, run)

    data = fastrank.io.from_tables(truth_df, recs_df)   # pandas, pyarrow or polars
    res = data.evaluate(["ndcg@10", "recall@10"])
    data.per_user(res)                                  # a table keyed by the original user ids
"""

from .tables import Tables, from_tables, per_user_table
from .trec_files import Qrels, Run, read_qrels, read_run, trec_arrays

__all__ = ["read_qrels", "read_run", "trec_arrays", "Qrels", "Run", "from_tables", "Tables",
           "per_user_table"]
