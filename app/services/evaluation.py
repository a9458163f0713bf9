"""Held-out metrics recorded with every version."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.inference import InferenceModel
from models.metrics import summarize


def _finite(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: None if v is None or not np.isfinite(v) else float(v) for k, v in summary.items()}


def class_indices(model: InferenceModel, y: np.ndarray) -> np.ndarray:
    """Index of each label in ``model.classes`` (labels come from the training data)."""
    index = {c: i for i, c in enumerate(model.classes)}
    return np.array([index[v] for v in y.tolist()], dtype=np.intp)


def evaluation_metrics(model: InferenceModel, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Metrics on held-out rows: probability quality where there are probabilities,
    accuracy and mean cost under the training costs (or 0-1 costs) always."""
    out: dict[str, Any] = {"n_evaluation": int(len(y))}
    if not len(y):
        return out
    y_index = class_indices(model, y)
    costs = (
        model.training_costs if model.training_costs is not None else 1.0 - np.eye(model.n_classes)
    )
    decisions = model.decide(X, costs)
    out["accuracy"] = float((decisions.labels_index == y_index).mean())
    out["mean_cost_at_training_costs"] = float(
        np.asarray(costs)[y_index, decisions.labels_index].mean()
    )
    if model.rule == "fixed":
        return out
    proba = model.predict_proba(X)
    if model.n_classes == 2:
        out.update(_finite(summarize((y_index == 1).astype(np.int8), proba[:, 1])))
    else:
        onehot = np.eye(model.n_classes)[y_index]
        out["brier"] = float(((proba - onehot) ** 2).sum(axis=1).mean())
        picked = np.clip(proba[np.arange(len(y_index)), y_index], 1e-15, 1.0)
        out["log_loss"] = float(-np.log(picked).mean())
    return out
