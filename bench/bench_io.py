"""asv: real inputs. Data frames to arrays (fastrank.io.from_tables), TREC files to
trec_eval's measures, and rmse / mae from factors."""

import numpy as np

import fastrank as fr
from fastrank import io, trec

from .datasets import random_factors, record_columns, trec_files, workload


def _table(library, columns):
    try:
        if library == "pandas":
            import pandas as pd

            return pd.DataFrame(columns)
        if library == "pyarrow":
            import pyarrow as pa

            return pa.table(columns)
        import polars as pl

        return pl.DataFrame(columns)
    except ImportError:
        raise NotImplementedError(f"{library} is not installed") from None


class FromTables:
    """1,000,000 users: 4M judgments and 10M recommendations to CSR + top-K, then ndcg@10."""

    params = (["pandas", "pyarrow", "polars"], ["int", "str"])
    param_names = ["library", "user_ids"]
    timeout = 600

    def setup(self, library, ids):
        truth, recs = record_columns(1_000_000, 10, ids)
        self.truth, self.recs = _table(library, truth), _table(library, recs)
        small = {name: values[:100] for name, values in recs.items()}
        io.from_tables(_table(library, {n: v[:100] for n, v in truth.items()}),
                       _table(library, small))

    def time_from_tables(self, library, ids):
        io.from_tables(self.truth, self.recs)

    def peakmem_from_tables(self, library, ids):
        io.from_tables(self.truth, self.recs)


class TrecFiles:
    """2,000 queries x 1,000 retrieved documents: read both files and print trec_eval's
    default measures."""

    timeout = 600

    def setup(self):
        self.qrels, self.run = trec_files(2_000, 1_000)
        trec.evaluate_files(self.qrels, self.run, None)

    def time_trec_default_measures(self):
        trec.evaluate_files(self.qrels, self.run, None)

    def peakmem_trec_default_measures(self):
        trec.evaluate_files(self.qrels, self.run, None)


class RatingErrors:
    """rmse over the 4M stored entries of 1,000,000 users, from factors or from values."""

    timeout = 600

    def setup(self):
        self.truth, _ = workload(1_000_000, 10)
        self.users, self.items = random_factors(1_000_000, n_factors=32)
        self.values = np.ones(self.truth.nnz)
        fr.rmse(self.truth[:100], user_factors=self.users[:100], item_factors=self.items)
        fr.rmse(self.truth[:100], self.values[:self.truth[:100].nnz])

    def time_rmse_factors(self):
        fr.rmse(self.truth, user_factors=self.users, item_factors=self.items)

    def time_rmse_values(self):
        fr.rmse(self.truth, self.values)

    def peakmem_rmse_factors(self):
        fr.rmse(self.truth, user_factors=self.users, item_factors=self.items)
