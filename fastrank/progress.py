"""Progress bars (tqdm) for long evaluations and long commands; no-op objects when off."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Silent:
    def update(self, n: float = 1) -> None:
        pass

    def stage(self, name: str) -> None:
        pass


@contextmanager
def progress_bar(total: int, enabled: bool, unit: str = "users",
                 desc: str | None = None) -> Iterator[Any]:
    """A tqdm bar over `total` units (rate shown as units/s) if enabled, else a no-op."""
    if not enabled:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, unit=unit, unit_scale=True, desc=desc) as bar:
        yield bar


class _Stages:
    """`stage(name)` marks the start of the next step: the bar shows its name, how many
    steps are done and the time so far."""

    def __init__(self, bar: Any) -> None:
        self._bar, self._started = bar, False

    def stage(self, name: str) -> None:
        if self._started:
            self._bar.update(1)
        self._started = True
        self._bar.set_postfix_str(name)


@contextmanager
def stage_bar(total: int, enabled: bool, desc: str | None) -> Iterator[Any]:
    """A tqdm bar over the `total` named steps of a command (reading files, evaluating,
    writing), drawn on stderr and removed when done, if enabled; else a no-op."""
    if not enabled:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc=desc, leave=False,
              bar_format="{desc} |{bar:12}| {n_fmt}/{total_fmt} steps done{postfix} [{elapsed}]") \
            as bar:
        stages = _Stages(bar)
        yield stages
        if stages._started:
            bar.update(1)
