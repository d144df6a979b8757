"""`Result`: what `fastrank.evaluate` returns, a read-only mapping metric -> mean, with
confidence intervals, segments, curves and plots from its per-user values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from ._types import PlotPath
from .evaluation import Evaluation, UnknownMetric
from .plots import plot_result, result_curve
from .stats import result_ci, segments

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .plots import Curve
    from .stats import Segments

__all__ = ["Result", "UnknownMetric"]


class Result(Evaluation):
    __doc__ = Evaluation.__doc__

    def ci(self, metric: str, level: float = 0.95, method: str = "bootstrap",
           n_resamples: int = 1000, seed: int | None = None,
           n_threads: int | None = None) -> tuple[float, float]:
        """(low, high): a confidence interval of the mean of `metric` over the counted
        users. method="bootstrap": percentile interval of `n_resamples` resampled means
        (Numba, the same for a seed whatever the thread count); "normal": mean +- z * s.e.
        A pooled mean (implicit's precision) is resampled as the ratio it is."""
        self.require_per_user("ci()")
        return result_ci(self, metric, level, method, n_resamples, seed, n_threads)

    def by(self, labels: ArrayLike, metrics: str | Sequence[str] | None = None,
           level: float = 0.95, method: str = "normal", n_resamples: int = 1000,
           seed: int | None = None) -> Segments:
        """Means, counted users and intervals per segment: `labels` gives a segment (any
        sortable value) to every row. No second kernel pass: from the per-user values."""
        return segments(self, labels, metrics, level, method, n_resamples, seed)

    def curve(self, metric: str, level: float | None = 0.95, method: str = "normal",
              n_resamples: int = 1000, seed: int | None = None) -> Curve:
        """`metric` at every cutoff 1..K, with intervals (level=None: none), from a result
        evaluated with curves=..."""
        self.require_per_user("curve()")
        return result_curve(self, metric, level, method, n_resamples, seed)

    def plot(self, metrics: str | Sequence[str], path: PlotPath = None,
             level: float | None = 0.95, title: str | None = None, method: str = "normal",
             n_resamples: int = 1000, seed: int | None = None) -> Figure:
        """Draw metric@k curves with `level` interval bands by `method` ("normal" or
        "bootstrap", named in the legend; level=None: no bands) with matplotlib; titled
        with the counted users unless `title` is given ("" for none); write to `path`
        (PNG, SVG, PDF) if given; return the Figure."""
        self.require_per_user("plot()")
        return plot_result(self, metrics, path, level, title, method, n_resamples, seed)
