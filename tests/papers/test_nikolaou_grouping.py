"""One entry per data set: one-vs-rest tasks of a data set are averaged before ranking."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.papers import nikolaou_report as R


def test_dataset_of_strips_the_one_vs_rest_suffix() -> None:
    assert R.dataset_of("satimage:2-vs-rest") == "satimage"
    assert R.dataset_of("pima") == "pima"


def test_ranks_by_dataset_average_the_tasks_of_one_dataset() -> None:
    # Data set "a" has two tasks: method X wins one clearly, loses the other narrowly, so
    # per task X and Y tie at rank 1.5 on "a"; per data set X's mean area is lower -> rank 1.
    rows = []
    for task, areas in {
        "a:0-vs-rest": (0.1, 0.3),
        "a:1-vs-rest": (0.21, 0.2),
        "b": (0.5, 0.4),
    }.items():
        for method, area in zip(("X", "Y"), areas, strict=True):
            rows.append({"learner": "logistic", "task": task, "repeat": 0, "method": method,
                         "area": area, "n_estimators": 10.0, "failed_ratios": 0})  # fmt: skip
    ar = pd.DataFrame(rows)
    per_task, _ = R.rank_table(ar, "logistic")
    per_ds, _ = R.rank_table(R.by_dataset(ar), "logistic")
    assert per_task.loc["X", "avg_rank"] == pytest.approx((1 + 2 + 2) / 3)
    assert per_ds.loc["X", "avg_rank"] == pytest.approx((1 + 2) / 2)
    assert per_ds.loc["X", "mean_area"] == pytest.approx(((0.1 + 0.21) / 2 + 0.5) / 2)
    test, _ = R.rank_test(R.by_dataset(ar), "logistic")
    assert test["n"] == 2 and test["k"] == 2
