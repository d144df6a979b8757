"""Progress bars (tqdm) for long evaluations; a no-op object when they are off."""

from contextlib import contextmanager


class _Silent:
    def update(self, n=1):
        pass


@contextmanager
def progress_bar(total, enabled, unit="users", desc=None):
    """A tqdm bar over `total` units (rate shown as units/s) if enabled, else a no-op."""
    if not enabled:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, unit=unit, unit_scale=True, desc=desc) as bar:
        yield bar
