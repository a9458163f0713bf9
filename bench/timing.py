"""Timing loops shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


def seconds(f: Callable[[], Any]) -> float:
    """The wall time of one call of ``f``."""
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def median_seconds(f: Callable[[], Any], repeats: int, warmup: int = 1) -> float:
    """The median wall time of ``repeats`` calls of ``f``, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        f()
    return float(np.median([seconds(f) for _ in range(repeats)]))
