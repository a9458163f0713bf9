"""Baseline for bench/serving/service.py: the endpoint a user would write by hand.

A minimal FastAPI app that loads, at start-up, a pickled scikit-learn
``CalibratedClassifierCV(AdaBoostClassifier(DecisionTreeClassifier(max_depth=1)))``
(the path comes from the ``BASELINE_MODEL_PATH`` environment variable) and thresholds
its probability with the costs sent in each request: positive iff
``p1 >= c_fp / (c_fp + c_fn)``.

Pickle is used here, in the benchmark only, because it is what such a hand-written
service does; costwise itself never unpickles anything.

Run: ``BASELINE_MODEL_PATH=model.pkl uvicorn --app-dir bench/serving baseline_app:app``.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI(title="baseline")

with open(os.environ["BASELINE_MODEL_PATH"], "rb") as fh:
    MODEL: Any = pickle.load(fh)  # noqa: S301 - benchmark baseline only


class Costs(BaseModel):
    c_fp: float
    c_fn: float


class PredictRequest(BaseModel):
    instances: list[list[float]]
    costs: Costs


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@app.post("/predict")
def predict(req: PredictRequest) -> dict[str, Any]:
    p1 = MODEL.predict_proba(np.asarray(req.instances, dtype=np.float64))[:, 1]
    threshold = req.costs.c_fp / (req.costs.c_fp + req.costs.c_fn)
    decisions = (p1 >= threshold).astype(int)
    return {
        "threshold": threshold,
        "predictions": [
            {"probability": p, "decision": d}
            for p, d in zip(p1.tolist(), decisions.tolist(), strict=True)
        ],
    }
