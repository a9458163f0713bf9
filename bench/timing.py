"""Timing loops shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


def median_seconds(f: Callable[[], Any], repeats: int, warmup: int = 1) -> float:
    """The median wall time of ``repeats`` calls of ``f``, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        f()
    times = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        f()
        times[i] = time.perf_counter() - t0
    return float(np.median(times))
