"""asv: fastrank.dask.evaluate on 200,000 users x K = 10 from in-memory Dask DataFrames,
on Dask's threaded scheduler (no cluster: the shuffle, the per-partition kernel and the
tree of sums). `python bench/dask_speed.py` runs the worker-process comparison."""

from .datasets import record_columns

METRICS = ["precision@10", "ndcg@10", "map@10"]


class DaskEvaluate:
    timeout = 900

    def setup(self):
        try:
            import dask
            import dask.dataframe as dd
        except ImportError:
            raise NotImplementedError("dask is not installed") from None
        import pandas as pd

        from fastrank import dask as fastrank_dask

        self.evaluate = fastrank_dask.evaluate
        truth, recs = record_columns(200_000, 10)
        self.truth = dd.from_pandas(pd.DataFrame(truth), npartitions=4)
        self.recs = dd.from_pandas(pd.DataFrame(recs), npartitions=4)
        self.config = dask.config.set(scheduler="threads")
        self.config.__enter__()
        self.evaluate(self.truth.head(100, compute=False), self.recs.head(100, compute=False),
                      METRICS, per_user=False)

    def teardown(self):
        self.config.__exit__(None, None, None)

    def time_dask_evaluate(self):
        self.evaluate(self.truth, self.recs, METRICS, per_user=False)

    def peakmem_dask_evaluate(self):
        self.evaluate(self.truth, self.recs, METRICS, per_user=False)
