"""asv: evaluating models, as ALS training loops do every epoch: fr.evaluate_model on an
implicit ALS model (fitted once, cached) and the drop-in
fastrank.implicit.ranking_metrics_at_k, beside implicit's own ranking_metrics_at_k.
Needs implicit (the bench extra); skipped without it."""

import fastrank as fr

from .datasets import als_workload

LABELS = ["precision@10", "map@10", "ndcg@10", "auc@10"]


class Models:
    params = [20_000, 200_000]
    param_names = ["users"]
    timeout = 900

    def setup(self, users):
        try:
            from implicit.als import AlternatingLeastSquares
        except ImportError:
            raise NotImplementedError("implicit is not installed") from None
        self.train, self.test, user_factors, item_factors = als_workload(users)
        self.model = AlternatingLeastSquares(factors=user_factors.shape[1])
        self.model.user_factors, self.model.item_factors = user_factors, item_factors
        fr.evaluate_model(self.model, self.test[:500], LABELS, train=self.train[:500],
                          show_progress=False)

    def time_evaluate_model(self, users):
        fr.evaluate_model(self.model, self.test, LABELS, train=self.train,
                          convention="implicit", ties="implicit", show_progress=False)

    def peakmem_evaluate_model(self, users):
        fr.evaluate_model(self.model, self.test, LABELS, train=self.train,
                          convention="implicit", ties="implicit", show_progress=False)

    def time_drop_in(self, users):
        from fastrank.implicit import ranking_metrics_at_k

        ranking_metrics_at_k(self.model, self.train, self.test, K=10, show_progress=False)

    def time_implicit_itself(self, users):
        from implicit.evaluation import ranking_metrics_at_k

        ranking_metrics_at_k(self.model, self.train, self.test, K=10, show_progress=False)
