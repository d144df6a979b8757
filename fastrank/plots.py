"""metric@k curves with interval bands, drawn with matplotlib (an optional extra:
`pip install matplotlib`) to PNG, SVG or PDF files.

    res = fr.evaluate(truth, topk, ["ndcg", "recall"], curves=True)   # every cutoff 1..K
    res.curve("ndcg")                                  # Curve(k, mean, low, high)
    res.plot(["ndcg", "recall"], path="curves.png")
    fr.plot_compare({"als": a, "bpr": b}, ["ndcg"], path="compare.svg")
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._types import FloatArray, IntArray, PlotPath

from .evaluation import Evaluation
from .grammar import check_curve_name
from .output import unwritable, written
from .stats import METHODS, _seed, check_resamples, metric_names, of_system, result_ci
from .validation import check_choice, check_level, check_seed

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# The formats named in the docs first; whatever else matplotlib writes follows them.
FORMATS = ("png", "svg", "pdf")


@dataclass(frozen=True)
class Curve:
    """A metric at every cutoff 1..K: the means and (level given) interval bounds."""

    metric: str
    k: IntArray
    mean: FloatArray
    low: FloatArray
    high: FloatArray
    level: float | None


def curve_labels(result: Evaluation, metric: str) -> list[str]:
    """The labels metric@1..metric@K of the result, K the longest run from 1."""
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a metric name (a string) such as 'ndcg'; got "
                        f"{metric!r} of type {type(metric).__name__}")
    name = metric.strip().lower()
    labels = []
    c = 1
    while f"{name}@{c}" in result.metrics:
        labels.append(f"{name}@{c}")
        c += 1
    if not labels:
        base = name.partition("@")[0]
        check_curve_name(base, repr(metric))
        raise ValueError(
            f"{metric!r} has no curve in this result: evaluate with curves=[{base!r}] (or "
            f"curves=True) to get it at every cutoff 1..K in the same pass")
    return labels


def result_curve(result: Evaluation, metric: str, level: float | None = 0.95,
                 method: str = "normal", n_resamples: int = 1000,
                 seed: int | None = None) -> Curve:

    labels = curve_labels(result, metric)
    level = None if level is None else check_level(level)
    method = check_choice(method, "method", METHODS)
    check_resamples(n_resamples, method if level is not None else None)  # level=None: no CI
    check_seed(seed)
    mean = np.array([result[label] for label in labels])
    low = np.full(mean.shape, np.nan)
    high = np.full(mean.shape, np.nan)
    if level is not None:
        for i, label in enumerate(labels):
            low[i], high[i] = result_ci(result, label, level, method, n_resamples,
                                        None if seed is None else (_seed(seed) + i) % 2**63)
    return Curve(metric.strip().lower(), np.arange(1, len(labels) + 1), mean, low, high,
                 level)


def _figure(panels: int, title: str | None) -> tuple[Figure, list[Any]]:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib: pip install matplotlib") from None
    fig = Figure(figsize=(4.6 * panels, 3.6), layout="constrained")
    axes = [fig.add_subplot(1, panels, i + 1) for i in range(panels)]
    if title:
        fig.suptitle(title)
    return fig, axes


def _draw(ax: Any, curve: Curve, label: str) -> None:
    infinite = np.flatnonzero(np.isinf(curve.mean))
    if infinite.size:  # matplotlib would leave the point out without a word
        at = int(infinite[0])
        raise ValueError(
            f"{label}: the mean of {curve.metric}@{int(curve.k[at])} is "
            f"{curve.mean[at]}, which a plot cannot draw (some users' values are "
            f"infinite); evaluate it so that every user's value is finite, e.g. "
            f"miscalibration with alpha > 0")
    line, = ax.plot(curve.k, curve.mean, marker="o" if curve.k.size <= 20 else None,
                    markersize=3, label=label)
    if curve.level is not None and np.isfinite(curve.low).any():
        ax.fill_between(curve.k, curve.low, curve.high, alpha=0.2, color=line.get_color(),
                        linewidth=0)


def _finish(ax: Any, ylabel: str) -> None:
    ax.set_xlabel("cutoff k")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def band_title(level: float | None, method: str, n_resamples: int) -> str | None:
    """The legend's title: what the bands are, with the interval method; None without."""
    if level is None:
        return None
    how = ("mean ± z·s.e." if method == "normal" else
           f"percentile bootstrap of {n_resamples:,} resamples")
    return f"bands: {level:.0%} intervals ({how})"


def _title(title: str | None, results: Mapping[str, Evaluation]) -> str:
    """The figure's title: `title` as given ("" for none), or by default the systems and
    how many users each counts."""
    if title is not None:
        return title
    counts = {res.n_users for res in results.values()}
    names = " vs ".join(results)
    if len(counts) == 1:
        return f"{names}: {counts.pop():,} users counted ({_conventions(results)})"
    return " vs ".join(f"{name} ({res.n_users:,} users counted)"
                       for name, res in results.items()) + f" ({_conventions(results)})"


def _conventions(results: Mapping[str, Evaluation]) -> str:
    return "/".join(dict.fromkeys(res.convention or res.kind for res in results.values()))


def _formats() -> tuple[str, ...] | None:
    """The file suffixes savefig writes: png, svg, pdf, then matplotlib's others."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        return None  # _figure says what to install
    others = sorted(set(FigureCanvasBase.get_supported_filetypes()) - set(FORMATS))
    return FORMATS + tuple(others)


def check_path(path: PlotPath) -> PlotPath:
    """Check before anything is drawn that `path` can be written: a file name (str or
    os.PathLike) whose suffix names a format matplotlib writes, in an existing writable
    folder, or a binary file object."""
    if path is None or hasattr(path, "write"):
        return path
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a file name (str or pathlib.Path) such as "
                        f"'curves.png', or None; got {path!r} of type {type(path).__name__}")
    text = os.fsdecode(path)
    suffix = os.path.splitext(text)[1][1:].lower()
    formats = _formats()
    if not suffix:
        raise ValueError(f"path {text!r} has no suffix, which names the format; end it in "
                         f".png, .svg or .pdf")
    if formats is not None and suffix not in formats:
        raise ValueError(f"path {text!r} ends in .{suffix}, a format that cannot be written; "
                         f"end it in .png, .svg or .pdf (also supported: "
                         f"{', '.join('.' + f for f in formats[len(FORMATS):])})")
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise ValueError(f"path {text!r} cannot be written: "
                         + ("it is a directory" if os.path.isdir(text) else
                            f"the folder {folder!r} does not exist or is not writable"))
    return path


def _check_results(results: Mapping[str, Evaluation]) -> Mapping[str, Evaluation]:
    """results as a non-empty dict of fastrank Results."""
    if not isinstance(results, dict):
        raise TypeError(f"results must be a non-empty dict {{name: Result}}, e.g. "
                        f"{{'als': res_als}}; got {type(results).__name__}")
    if not results:
        raise ValueError("results must be a non-empty dict {name: Result}, e.g. "
                         "{'als': res_als}; got an empty dict")
    for name, res in results.items():
        if not isinstance(res, Evaluation):
            raise TypeError(f"results[{name!r}] must be a fastrank Result (what fr.evaluate "
                            f"returns); got {type(res).__name__}")
    return results


def _save(fig: Figure, path: PlotPath) -> Figure:
    """Write the figure to `path` (if given) whole or not at all (fastrank.output)."""
    if path is None:
        return fig
    if hasattr(path, "write"):  # a file object: written where it is
        try:
            fig.savefig(path, dpi=120)
        except OSError as err:
            raise unwritable(err, getattr(path, "name", repr(path)), "path", "") from None
        return fig
    suffix = os.path.splitext(os.fsdecode(path))[1][1:].lower()  # check_path: one
    with written(path) as handle:  # a path: not a file object
        fig.savefig(handle, dpi=120, format=suffix)
    return fig


def plot_result(result: Evaluation, metrics: str | Iterable[str], path: PlotPath = None,
                level: float | None = 0.95, title: str | None = None, method: str = "normal",
                n_resamples: int = 1000, seed: int | None = None) -> Figure:
    metrics = metric_names(metrics, example="ndcg")
    check_path(path)
    curves = [result_curve(result, m, level, method, n_resamples, seed) for m in metrics]
    if title is None:
        title = f"{result.n_users:,} users counted ({result.convention or result.kind})"
    fig, (ax,) = _figure(1, title)
    for c in curves:
        _draw(ax, c, c.metric)
    _finish(ax, "mean over users")
    ax.legend(fontsize="small", title=band_title(level, method, n_resamples),
              title_fontsize="x-small")
    return _save(fig, path)


def plot_compare(results: Mapping[str, Evaluation], metrics: str | Iterable[str],
                 path: PlotPath = None, level: float | None = 0.95, title: str | None = None,
                 method: str = "normal", n_resamples: int = 1000,
                 seed: int | None = None) -> Figure:
    """One panel per metric, one line per system (with its interval band) over k = 1..K,
    one legend for the figure, titled by default with the systems and their counted users
    ("" for no title); written to `path` (PNG, SVG or PDF by its suffix) if given. The
    bands are `level` intervals by `method` ("normal" or "bootstrap"). Returns the
    Figure."""
    _check_results(results)
    metrics = metric_names(metrics, example="ndcg")
    check_path(path)
    curves: dict[str, dict[str, Any]] = {metric: {} for metric in metrics}
    for metric in metrics:
        for name, res in results.items():
            with of_system(name):
                curves[metric][name] = result_curve(res, metric, level, method, n_resamples,
                                                    seed)
    fig, axes = _figure(len(metrics), _title(title, results))
    for ax, metric in zip(axes, metrics):
        for name, curve in curves[metric].items():
            _draw(ax, curve, name)
        _finish(ax, metric)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 6),
               fontsize="small", title=band_title(level, method, n_resamples),
               title_fontsize="x-small")
    return _save(fig, path)
