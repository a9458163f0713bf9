"""Plot rows built at registration: what is stored, the held-out cap, the SVG renderer."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from sklearn.datasets import make_classification

from app.services.plots.precompute import HELDOUT, HELDOUT_ROWS, plot_rows
from app.services.plots.svg import Axis, Series, line_chart
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.evaluation.metrics import summarize

NS = "{http://www.w3.org/2000/svg}"


def test_heldout_sample_is_capped_and_stratified_while_plots_use_every_row() -> None:
    X, y = make_classification(27_000, 4, n_informative=3, n_redundant=1, weights=[0.9],
                               random_state=0)  # fmt: skip
    model = CalibratedBoosting(AdaBoost(n_estimators=5), random_state=0).fit(X[:2000], y[:2000])
    inference = model.to_inference()
    X_eval, y_eval = X[2000:], y[2000:]
    rows = {r.kind: r for r in plot_rows(inference, X_eval, y_eval)}
    assert list(rows) == ["brier_curve", "reliability", "roc", "cost_curve", HELDOUT]
    held = rows[HELDOUT].data
    assert rows[HELDOUT].svg is None
    assert len(held["y"]) == len(held["p"]) == HELDOUT_ROWS and held["n_evaluation"] == 25_000
    assert np.mean(held["y"]) == pytest.approx(np.mean(y_eval), abs=1e-3)
    p_all = inference.predict_proba(X_eval)[:, 1]
    assert set(held["p"]) <= set(p_all.tolist())
    # the stored plots are computed on all 25,000 rows: they match the version's metrics
    metrics = summarize(y_eval, p_all)
    assert rows["roc"].data["auc"] == pytest.approx(metrics["auc"], abs=1e-12)
    assert rows["brier_curve"].data["area"] == pytest.approx(metrics["brier_curve_area"])
    assert sum(rows["reliability"].data["after"]["count"]) == 25_000
    assert len(rows["roc"].data["fpr"]) <= 200
    for kind in ("brier_curve", "reliability", "roc", "cost_curve"):
        svg = rows[kind].svg
        assert svg is not None and ET.fromstring(svg).tag == f"{NS}svg"
        assert len(svg) < 20_000


def test_no_rows_no_plots() -> None:
    X, y = make_classification(200, 4, random_state=0)
    inference = (
        CalibratedBoosting(AdaBoost(n_estimators=3), random_state=0).fit(X, y).to_inference()
    )
    assert plot_rows(inference, X[:0], y[:0]) == []


def test_svg_is_deterministic_escaped_and_breaks_lines_at_none() -> None:
    series = [
        Series('a <&> "b"', [0.01, 0.1, 1.0, 10.0], [0.0, None, 0.5, 0.7], markers=True),
        Series("flat", [0.01, 100.0], [0.2, 0.2], dashed=True),
    ]
    svg = line_chart("x < y & z", Axis("ratio", 0.01, 100.0, log=True), Axis("cost", 0, 1), series)
    assert svg == line_chart(
        "x < y & z", Axis("ratio", 0.01, 100.0, log=True), Axis("cost", 0, 1), series
    )
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg" and root.find(f"{NS}title").text == "x < y & z"  # type: ignore[union-attr]
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert 'a <&> "b"' in texts and "x < y & z" in texts
    assert {"0.01", "0.1", "1", "10", "100"} <= set(texts)  # log ticks
    assert {"0", "0.2", "0.4", "0.6", "0.8", "1"} <= set(texts)  # linear ticks
    lines = list(root.iter(f"{NS}polyline"))
    assert len(lines) == 2  # the None split the first series: one point alone + a line of 2
    assert any(p.get("stroke-dasharray") for p in lines)
    assert len(list(root.iter(f"{NS}circle"))) == 3
