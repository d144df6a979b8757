"""Progress bars (tqdm) for long evaluations; a no-op object when they are off."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Silent:
    def update(self, n: float = 1) -> None:
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
