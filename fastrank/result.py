"""`Result`: what `fastrank.evaluate` returns, a read-only mapping metric -> mean, with
confidence intervals, segments, curves and plots from its per-user values."""

from .evaluation import Evaluation, UnknownMetric
from .plots import plot_result, result_curve
from .stats import result_ci, segments

__all__ = ["Result", "UnknownMetric"]


class Result(Evaluation):
    __doc__ = Evaluation.__doc__

    def ci(self, metric, level=0.95, method="bootstrap", n_resamples=1000, seed=None,
           n_threads=None):
        """(low, high): a confidence interval of the mean of `metric` over the counted
        users. method="bootstrap": percentile interval of `n_resamples` resampled means
        (Numba, the same for a seed whatever the thread count); "normal": mean +- z * s.e.
        A pooled mean (implicit's precision) is resampled as the ratio it is."""
        self.require_per_user("ci()")
        return result_ci(self, metric, level, method, n_resamples, seed, n_threads)

    def by(self, labels, metrics=None, level=0.95, method="normal", n_resamples=1000,
           seed=None):
        """Means, counted users and intervals per segment: `labels` gives a segment (any
        sortable value) to every row. No second kernel pass: from the per-user values."""
        return segments(self, labels, metrics, level, method, n_resamples, seed)

    def curve(self, metric, level=0.95, method="normal", n_resamples=1000, seed=None):
        """`metric` at every cutoff 1..K, with intervals (level=None: none), from a result
        evaluated with curves=..."""
        self.require_per_user("curve()")
        return result_curve(self, metric, level, method, n_resamples, seed)

    def plot(self, metrics, path=None, level=0.95, title=None, method="normal",
             n_resamples=1000, seed=None):
        """Draw metric@k curves with `level` interval bands by `method` ("normal" or
        "bootstrap", named in the legend; level=None: no bands) with matplotlib; titled
        with the counted users unless `title` is given ("" for none); write to `path`
        (PNG, SVG, PDF) if given; return the Figure."""
        self.require_per_user("plot()")
        return plot_result(self, metrics, path, level, title, method, n_resamples, seed)
