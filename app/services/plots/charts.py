"""Plot data (JSON, from :mod:`models.evaluation.plots`) -> SVG pictures, one function per kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.services.plots.svg import GREY, Axis, Series, line_chart, nice_ceiling

#: Plot kinds in the order they are listed, with their titles.
TITLES: dict[str, str] = {
    "brier_curve": "Brier curve: normalised cost Q against skew z",
    "reliability": "Reliability diagram before and after calibration",
    "roc": "ROC curve",
    "cost_curve": "Cost curve: mean cost per row against c_fn / c_fp",
    "capacity": "Automatic capacity: out-of-fold calibrated loss against rounds",
}


def _brier(d: dict[str, Any]) -> str:
    z = d["z"]
    return line_chart(
        f"Brier curve (area {d['area']:.4f})",
        Axis("skew z = c_fp / (c_fp + c_fn)", 0.0, 1.0),
        Axis("normalised cost Q (Eq. 26)", 0.0, 1.0),
        [
            Series("model", z, d["q"], markers=True),
            Series("all positive (Q = z)", z, d["all_positive"], color=GREY, dashed=True),
            Series("all negative (Q = 1 - z)", z, d["all_negative"], color="#bcbd22", dashed=True),
        ],
    )


def _reliability(d: dict[str, Any]) -> str:
    top = d.get("top_label", False)
    series = [Series("perfectly calibrated", [0.0, 1.0], [0.0, 1.0], color=GREY, dashed=True)]
    for key, name in (("before", "before calibration"), ("after", "after calibration")):
        part, ece = d.get(key), d.get(f"ece_{key}")
        if part is not None:
            label = f"{name} (ECE {ece:.3f})" if ece is not None else name
            series.append(
                Series(label, part["mean_predicted"], part["fraction_positive"], markers=True)
            )
    return line_chart(
        "Reliability diagram" + (" of the top label" if top else ""),
        Axis("top-label confidence" if top else "mean predicted probability", 0.0, 1.0),
        Axis("fraction correct" if top else "fraction positive", 0.0, 1.0),
        series,
    )


def _roc(d: dict[str, Any]) -> str:
    chance = Series("chance", [0.0, 1.0], [0.0, 1.0], color=GREY, dashed=True)
    if "curves" in d:  # multiclass: one vs rest
        curves = [
            Series(f"{c['label']} (AUC {c['auc']:.3f})", c["fpr"], c["tpr"]) for c in d["curves"]
        ]
        title = "ROC curves, one class against the rest"
    else:
        curves = [Series(f"model (AUC {d['auc']:.3f})", d["fpr"], d["tpr"])]
        title = "ROC curve"
    return line_chart(
        title,
        Axis("false positive rate", 0.0, 1.0),
        Axis("true positive rate", 0.0, 1.0),
        [*curves, chance],
    )


def _cost(d: dict[str, Any]) -> str:
    r = d["ratios"]
    costs = [v for v in d["mean_cost"] if v is not None] + d["all_positive"][:1]
    return line_chart(
        "Cost curve (c_fp = 1, c_fn = ratio)",
        Axis("cost ratio c_fn / c_fp (log scale)", d["ratio_min"], d["ratio_max"], log=True),
        Axis("mean cost per row", 0.0, nice_ceiling(1.1 * max(costs, default=1.0))),
        [
            Series("model at the cost-optimal threshold", r, d["mean_cost"]),
            Series("all positive", r, d["all_positive"], color=GREY, dashed=True),
            Series("all negative", r, d["all_negative"], color="#bcbd22", dashed=True),
        ],
    )


def _capacity(d: dict[str, Any]) -> str:
    curves = d["curves"]
    chosen = d["chosen"]
    metric = "log loss" if d["metric"] == "log_loss" else "Brier score"
    series = [Series(c["label"], c["rounds"], c["loss"]) for c in curves]
    series.append(
        Series(
            f"chosen: {chosen['n_estimators']} rounds",
            [chosen["n_estimators"]],
            [chosen["validation_loss"]],
            color=GREY,
            markers=True,
        )
    )
    values = [v for c in curves for v in c["loss"]]
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    pad = 0.05 * (hi - lo or 1.0)
    x_hi = max((max(c["rounds"]) for c in curves), default=10)
    return line_chart(
        f"Automatic capacity ({metric} of the calibrated out-of-fold probabilities)",
        Axis("boosting rounds (log scale)", 1.0, float(max(x_hi, 10)), log=True),
        Axis(f"out-of-fold {metric}", max(0.0, lo - pad), hi + pad),
        series,
    )


_RENDER: dict[str, Callable[[dict[str, Any]], str]] = {
    "brier_curve": _brier,
    "reliability": _reliability,
    "roc": _roc,
    "cost_curve": _cost,
    "capacity": _capacity,
}


def render_svg(kind: str, data: dict[str, Any]) -> str:
    """The SVG picture of plot ``kind`` (one of :data:`TITLES`) drawn from its JSON data."""
    return _RENDER[kind](data)
