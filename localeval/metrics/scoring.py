"""The scoring math: small pure functions, unit-tested on hand-computed cases."""

from __future__ import annotations

import math
from collections.abc import Sequence


def fraction(hits: int, total: int) -> float:
    """hits / total; NaN when there is nothing to count (the caller gives the reason)."""
    return hits / total if total else math.nan
