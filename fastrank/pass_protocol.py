"""What every pass of an evaluation is: the protocol the engine's Plan loops over.

A pass computes some requests (`per_user`, in the order of its output rows) for a block
of lists: `run(inputs, out)` fills `out` (one row per request, one column per list; NaN
where the request does not count the user) and returns the exposure of catalogue metrics
(or None). A pass of the truth as given that also writes the convention's counts
(`writes_counts`) runs first; otherwise the Plan counts before any pass. A family of the
registry (its `engine`) makes its passes from its requests (`fastrank.passes.FAMILIES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, TypeVar

from ._types import AnyArray, BoolArray, FloatArray, IntArray
from .aspects import check_aspects, ndeval_topics
from .grammar import Request
from .side_inputs import SideInputs
from .validation import Truth

_K = TypeVar("_K")


@dataclass(frozen=True)
class Setup:
    """What the passes of one plan share: the list length k, the catalogue size, the
    counting rule (`judged`: trec counts every judged user) and the side inputs."""

    k: int
    n_items: int
    judged: bool
    side: SideInputs = field(default_factory=SideInputs)

    @cached_property
    def aspects(self) -> Any:
        """item_aspects checked against the catalogue, once for every pass that reads it."""
        return check_aspects(self.side.item_aspects, self.n_items)


@dataclass
class Inputs:
    """One block's inputs, as every pass reads them: the truth as given (`view(rel)` at a
    relevance threshold, made once per truth), the checked lists, their truth rows, the
    thread count, the convention's counted rows and m (written before the passes read
    them, by the first pass or the Plan), the block's serendipity baseline and the values
    of the caller's labels."""

    data: Truth
    topk: AnyArray
    rows: IntArray
    threads: int
    counted: BoolArray
    n_relevant: IntArray
    view: Callable[[Any], Truth]
    baseline: Any = None
    external: Mapping[str, FloatArray] | None = None
    _topics: dict[int, BoolArray] = field(default_factory=dict)

    def topics(self, aspects: Any) -> BoolArray:
        """The counted rows that are ndeval's topics (a judged item with an aspect): what
        the trec convention's aspect measures count. Found once a block."""
        found = self._topics.get(id(aspects))
        if found is None:
            found = self._topics[id(aspects)] = \
                self.counted & ndeval_topics(self.data, self.rows, aspects)
        return found


class Pass(Protocol):
    """A pass: its requests in the order of its output rows, and run."""

    @property
    def per_user(self) -> Sequence[Request]:
        ...

    def run(self, inputs: Inputs, out: FloatArray) -> IntArray | None:
        """Fill out (len(per_user) x lists); the exposure of catalogue metrics or None."""
        ...


def group_by(requests: Iterable[Request], key: Callable[[Request], _K]) -> dict[_K, list[Request]]:
    """{key: the requests with that key}, in the order the keys first appear."""
    groups: dict[_K, list[Request]] = {}
    for r in requests:
        groups.setdefault(key(r), []).append(r)
    return groups
