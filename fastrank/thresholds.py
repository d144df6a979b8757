"""The truth at a relevance threshold, and which threshold decides the users a request
counts: the one rule of `rel=` for every family (see means.py for the rule in words)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .grammar import Request
from .validation import Truth

# the truth view of `judged`: every stored entry relevant
STORED = "stored"


# the loop of at_least's comparison: in float64, whatever the grades' dtype
_AT_LEAST = (np.float64, np.float64, np.bool_)


def at_least(data: Truth, rel: Any) -> Truth:
    """The truth with entries below `rel` stored as 0 (judged, not relevant); with
    rel=STORED, every stored entry as 1."""
    if rel is None:
        return data
    if rel is STORED:
        values = np.ones_like(data.data)
    else:
        # compared in float64, as the trec kernels compare: float32(0.7) is below 0.7
        values = np.where(np.greater_equal(data.data, rel, signature=_AT_LEAST), data.data, 0.0)
    return Truth(indptr=data.indptr, indices=data.indices, data=values, n_users=data.n_users,
                 n_items=data.n_items)


def counting_threshold(request: Request, judged: bool) -> Any:
    """The relevance threshold whose relevant items decide which users `request` counts:
    its rel= where the convention counts users by their relevant items (recsys,
    implicit: a user counts when m >= 1 at that threshold), else None (the truth as
    given; under trec every judged user counts, whatever the threshold, as trec_eval's
    -l counts every judged query)."""
    return None if judged else request.rel
