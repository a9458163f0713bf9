"""The per-phase clock of ``--threads`` runs: nested phases are subtracted from outer ones."""

from __future__ import annotations

import time

from bench.training.phases import PhaseClock, summarise


def test_a_nested_phase_is_not_counted_twice() -> None:
    clock = PhaseClock()
    with clock.phase("outer"):
        time.sleep(0.02)
        with clock.phase("inner"):
            time.sleep(0.05)
    assert 0.045 <= clock.wall["inner"] < 0.5
    assert 0.015 <= clock.wall["outer"] < 0.045  # its own 0.02 s, not the inner 0.05


def test_ratios_are_taken_within_a_round_then_the_median() -> None:
    def run(wall: float) -> dict[str, object]:
        return {"wall": wall, "cpu": wall, "binning_cpu": 0.0, "load_1min": 1.0,
                "phases": {"p": [wall, wall]}, "info": {}}  # fmt: skip

    runs = {
        "costwise@1": [run(10.0), run(30.0), run(12.0)],
        "lightgbm@1": [run(5.0), run(10.0), run(3.0)],
        "costwise@2": [run(5.0), run(10.0), run(8.0)],
        "lightgbm@2": [run(5.0), run(5.0), run(2.0)],
    }
    out = summarise(runs, [1, 2])  # type: ignore[arg-type]
    assert out["ratio"]["costwise/lightgbm@1"] == 3.0  # ratios 2, 3, 4
    assert out["ratio"]["costwise/lightgbm@2"] == 2.0  # ratios 1, 2, 4
    assert out["ratio"]["costwise speed-up 1->2"] == 2.0  # 2, 3, 1.5
    assert out["median"]["costwise@1"]["wall"] == 12.0
