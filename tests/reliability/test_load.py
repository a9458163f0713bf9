"""Proof 4 (bounded CI mode): the load run of bench/reliability/load.py for 20 s.

16 concurrent clients mixing predicts with different costs, reads and a training every
5 s against uvicorn on 127.0.0.1, with API keys (``COSTWISE_AUTH=on``): zero errors, and resident memory that does not run
away (the full 60 s x 32 clients run and its figures are in docs/reliability.md).
"""

from __future__ import annotations

from pathlib import Path

from bench.reliability.load import run_load
from tests.reliability.conftest import write_result


def test_bounded_load_has_no_errors(tmp_path: Path) -> None:
    """With authentication on: predictor key for predicts and reads, admin key to train."""
    result = run_load(seconds=20, clients=16, train_every=5, log_dir=tmp_path, auth=True)
    write_result("load-ci", result)
    assert result["errors"] == 0, result["error_examples"]
    assert result["requests"] > 100, result
    assert result["latency"]["train"]["n"] >= 2, result["latency"]
    memory = result["memory"]
    assert memory["peak_mib"] - memory["start_mib"] < 200, memory
