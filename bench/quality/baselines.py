"""Quality benchmark: costwise's default, through the HTTP API, against six baselines.

Usage (from the repository root)::

    .venv/bin/python -m bench quality.baselines                  # every set, 3 seeds
    .venv/bin/python -m bench quality.baselines --quick          # smoke run: 3 sets, 1 seed
    .venv/bin/python -m bench quality.baselines --costwise-params \
        '{"weak_learner": "tree", "max_depth": 3, "n_estimators": 200}' --datasets pima magic

What it measures (issue 13, part 5; CatBoost, XGBoost and the summary of issue 31):

* **costwise**: a real ``costwise serve`` (uvicorn, one worker, 127.0.0.1, a temporary
  SQLite registry, not pinned to a CPU) per benchmark process. Each training split is
  sent as JSON rows to ``POST /v1/models/{name}/versions?mode=sync`` with **no training
  parameters** (whatever the checked-out service's default is; ``--costwise-params``
  adds a JSON object of training parameters instead); the fit time is the wall time of
  that request, end to end. The test rows are then sent to ``POST .../predict`` once per
  cost setting (``costs`` for the two-class ratios, ``cost_matrix`` for the multiclass
  matrices, ``row_costs`` for the per-row data set) and costwise's own decisions are
  scored. When the default refuses a multiclass data set (today: 422, "needs exactly two
  classes"), the refusal is recorded and the set is measured with
  ``{"algorithm": "ovr_adaboost"}`` (one-vs-rest calibrated AdaBoost), labelled so.
* **baselines**, default hyper-parameters as a user would write them, each deciding by
  the Bayes rule on its probabilities (two classes: positive iff
  ``p >= c_fp / (c_fp + c_fn)``; K classes: ``argmin_j sum_i p_i C[i][j]``):
  ``CalibratedClassifierCV(AdaBoostClassifier(DecisionTreeClassifier(max_depth=1)))``,
  ``CalibratedClassifierCV(LGBMClassifier())``,
  ``CalibratedClassifierCV(HistGradientBoostingClassifier())``,
  ``CalibratedClassifierCV(XGBClassifier())`` (all sigmoid, cv=5: the scikit-learn
  defaults), ``CatBoostClassifier()`` (its defaults: CatBoost's probabilities are used as
  they come, as a CatBoost user would; output and its ``catboost_info/`` files off) and
  ``make_pipeline(StandardScaler(), LogisticRegression())`` (not wrapped in a calibrator:
  logistic regression is fitted on log loss already). ``random_state`` (CatBoost:
  ``random_seed``) is set to the seed where an estimator has one (reproducibility only);
  thread counts stay at each library's default. Labels are passed to every baseline as
  ``0..K-1`` (XGBoost accepts no other coding) and the probability columns mapped back.
* **data**: every CSV of ``--data-dir`` (default ``../shared/datasets``): the two-class
  sets and the one-vs-rest tasks of the multiclass sets (class k positive), each at
  c_fp:c_fn = 10:1, 3:1, 1:1, 1:3, 1:10; the multiclass sets also as K-class problems
  under three K x K matrices (0-1 costs; "miss10": misses of the rarest training class
  cost 10, other errors 1; "random": off-diagonal costs uniform on [1, 10], drawn from a
  generator seeded by the data set name and the seed, the same in every run). Splits:
  stratified 70/30, one per seed (``--seeds``), the same for every method. A synthetic
  fraud-like set with per-row costs (a missed fraud costs its amount, a false alarm a
  fixed review cost) is decided with ``row_costs`` (baselines: the same per-row
  thresholds) and reported as savings = 1 - cost / min(cost of flagging nothing, cost
  of flagging everything).
* **summary**: per (task, cost setting, seed) the ratio costwise cost / best baseline
  cost; the geometric mean over all of them and over the triples where neither
  costwise's nor the best baseline's cost is 0, and the median; per task (over settings
  and seeds, with the baseline best most often) and per setting; the count of tasks
  whose geometric mean is within 5% of the best baseline (<= 1.05) and above 1.25; how
  often each baseline is the best; the goals of issue 31 (geometric mean without the
  zero-cost triples <= 1.00, no task above 1.25; per-row costs: savings within 0.005 of
  the best baseline's), two-class and multiclass separately. Zero costs: when the best baseline's cost (or
  costwise's) is 0 the ratio is ``(cost + m) / (best + m)`` with ``m`` the cheapest
  single mistake of that cost setting (``min(c_fp, c_fn)``, the smallest off-diagonal
  entry): 1 when both are perfect, finite otherwise; ratios of positive costs unchanged.

Threads: ``OMP_WAIT_POLICY=PASSIVE`` is set (unless already set) before any OpenMP
library loads. On a loaded machine OpenMP's default spinning made
``CalibratedClassifierCV(HistGradientBoostingClassifier())`` on wine (178 rows) take
50 s instead of 4.5 s (measured twice each, 2026-11-25, load average 8-11 on 2 cores);
thread counts and every hyper-parameter stay at their defaults.

Each finished (task, seed) unit is written to ``<units-dir>/<unit>.json`` at once;
``--resume`` skips units already there, so a long run can be stopped and continued.
``--jobs N`` runs units in N processes, each with its own server: the fit-time columns
are then inflated by the competition for the cores (all fits of a unit still run in
the same process, so the methods are hit alike, but compare fit times only from
``--jobs 1`` runs). Results: ``bench/results/quality/baselines[-<label>].md`` and
``.json`` (run facts, summaries, what costwise trained per unit) and ``.csv`` (the raw
rows: one per task, seed, method and cost setting).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before numpy/sklearn/lightgbm load

import argparse
import contextlib
import hashlib
import importlib.metadata as md
import json
import math
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench.datasets import DATA_DIR
from bench.papers.common import (
    REPO_ROOT,
    Dataset,
    available_datasets,
    binary_tasks,
    load_dataset,
    md_table,
    run_info,
    stratified_split,
    write_csv,
    write_json,
)
from bench.record import RESULTS, result_path
from bench.reliability.server import free_port
from bench.serving.service import serve_cmd

DEFAULT_DATA_DIR = DATA_DIR
#: c_fp:c_fn of the two-class decisions.
RATIOS: tuple[tuple[float, float], ...] = ((10, 1), (3, 1), (1, 1), (1, 3), (1, 10))
MATRICES: tuple[str, ...] = ("0-1", "miss10", "random")
BASELINES: tuple[str, ...] = ("ada+cal", "lgbm+cal", "hgb+cal", "logreg", "catboost", "xgb+cal")
COSTWISE = "costwise"
METHODS: tuple[str, ...] = (COSTWISE, *BASELINES)
FRAUD = "fraud-synthetic"
FRAUD_REVIEW_COST = 5.0
QUICK_SETS: tuple[str, ...] = ("pima", "sonar", "wine")
TEST_SIZE = 0.3
#: goals of issue 31: geometric mean of the ratios without zero-cost triples <= 1.00, no
#: task's geometric mean above 1.25; per-row costs: savings within 0.005 of the best
#: baseline's. ``WITHIN``: a task "within 5%" of the best baseline.
GOAL_GEOMEAN, GOAL_WORST, GOAL_SAVINGS_GAP, WITHIN = 1.00, 1.25, 0.005, 1.05


# ============================================================== decisions and costs
def bayes_binary(p1: np.ndarray, c_fp: float, c_fn: float | np.ndarray) -> np.ndarray:
    """1 where ``p1 >= c_fp / (c_fp + c_fn)`` (per row when ``c_fn`` is an array), else 0."""
    return (np.asarray(p1) >= c_fp / (c_fp + np.asarray(c_fn, dtype=np.float64))).astype(np.int64)


def bayes_matrix(P: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``argmin_j sum_i P[:, i] C[i, j]`` (rows of ``C`` = truth; ties: the lowest j)."""
    return np.argmin(np.asarray(P) @ np.asarray(C), axis=1).astype(np.int64)


def binary_cost(y: np.ndarray, d: np.ndarray, c_fp: float, c_fn: float | np.ndarray) -> float:
    """Total cost: ``c_fp`` per false positive, ``c_fn`` (per row if an array) per miss."""
    y, d = np.asarray(y), np.asarray(d)
    fn = np.broadcast_to(np.asarray(c_fn, dtype=np.float64), y.shape)
    return float(c_fp * np.sum((d == 1) & (y == 0)) + np.sum(fn[(d == 0) & (y == 1)]))


def matrix_cost(y: np.ndarray, d: np.ndarray, C: np.ndarray) -> float:
    """Total cost ``sum_n C[y_n, d_n]``."""
    return float(np.asarray(C)[np.asarray(y), np.asarray(d)].sum())


def brier(P: np.ndarray, y: np.ndarray) -> float:
    """Brier score: two classes ``mean (p1 - y)^2`` for a 1-D ``P``; else the multiclass
    ``mean_n sum_k (P[n, k] - [y_n = k])^2``."""
    P, y = np.asarray(P, dtype=np.float64), np.asarray(y)
    if P.ndim == 1:
        return float(np.mean((P - y) ** 2))
    onehot = np.zeros_like(P)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.mean(np.sum((P - onehot) ** 2, axis=1)))


def cost_ratio(cost: float, best: float, unit: float) -> float:
    """costwise cost / best baseline cost; ``(cost + unit) / (best + unit)`` when either is 0.

    ``unit`` is the cheapest single mistake of the cost setting: a zero cost counts as
    "better by less than one mistake", which keeps the ratio finite and positive (1 when
    both are 0) and leaves every ratio of two positive costs unchanged.
    """
    if cost > 0 and best > 0:
        return cost / best
    return (cost + unit) / (best + unit)


def geomean(values: Sequence[float]) -> float:
    """Geometric mean (NaN for no values)."""
    v = np.asarray(values, dtype=np.float64)
    return float(np.exp(np.mean(np.log(v)))) if v.size else math.nan


def savings(cost: float, y: np.ndarray, amount: np.ndarray, review: float) -> float:
    """``1 - cost / min(all-negative cost, all-positive cost)`` for the fraud costs."""
    y = np.asarray(y)
    trivial = min(float(np.sum(np.asarray(amount)[y == 1])), review * float(np.sum(y == 0)))
    return 1.0 - cost / trivial


def zero_one_matrix(k: int) -> np.ndarray:
    return 1.0 - np.eye(k)


def miss10_matrix(k: int, cls: int) -> np.ndarray:
    """0-1 costs except that missing class ``cls`` (truth ``cls``, decided otherwise) costs 10."""
    C = zero_one_matrix(k)
    C[cls, :] *= 10.0
    return C


def random_matrix(k: int, dataset: str, seed: int) -> np.ndarray:
    """Off-diagonal costs uniform on [1, 10] from a generator seeded by (dataset, seed)."""
    h = int.from_bytes(hashlib.sha256(f"{dataset}:{seed}".encode()).digest()[:8], "little")
    C = np.random.default_rng(h).uniform(1.0, 10.0, size=(k, k))
    np.fill_diagonal(C, 0.0)
    return np.round(C, 3)


def matrices(k: int, y_train: np.ndarray, dataset: str, seed: int) -> dict[str, np.ndarray]:
    counts = np.bincount(y_train, minlength=k)
    rare = int(np.argmin(counts))  # ties: the lowest class code
    return {
        "0-1": zero_one_matrix(k),
        "miss10": miss10_matrix(k, rare),
        "random": random_matrix(k, dataset, seed),
    }


def ratio_label(c_fp: float, c_fn: float) -> str:
    return f"{c_fp:g}:{c_fn:g}"


def unit_cost(setting: str, C: np.ndarray | None = None) -> float:
    """Cheapest single mistake of a cost setting (for zero-cost denominators)."""
    if C is not None:
        off = C[~np.eye(len(C), dtype=bool)]
        return float(off[off > 0].min())
    a, b = (float(v) for v in setting.split(":"))
    return min(a, b)


# ============================================================== synthetic per-row data
def fraud_data(n: int = 20_000, seed: int = 1234) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fraud-like data: ``(X, y, amount)``; about 6% positives.

    Eight standard-normal features plus log(amount); the fraud log-odds depend on an
    interaction (x0 * x1), a linear term, a non-linear |x3| and the amount. Fixed data
    (the seed of the benchmark only changes the split).
    """
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 8))
    amount = np.round(rng.lognormal(mean=3.5, sigma=1.1, size=n), 2)
    la = np.log(amount)
    logit = (
        -4.2 + 1.4 * Z[:, 0] * Z[:, 1] + 0.9 * Z[:, 2] + 0.8 * np.abs(Z[:, 3]) + 0.35 * (la - 3.5)
    )
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    X = np.column_stack([Z, la])
    return X, y, amount


# ============================================================== baselines
def make_baseline(name: str, seed: int) -> Any:
    """One baseline estimator with default hyper-parameters (``random_state`` = seed)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import AdaBoostClassifier, HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    if name == "ada+cal":
        return CalibratedClassifierCV(
            AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), random_state=seed)
        )
    if name == "lgbm+cal":
        from lightgbm import LGBMClassifier

        return CalibratedClassifierCV(LGBMClassifier(random_state=seed, verbose=-1))
    if name == "hgb+cal":
        return CalibratedClassifierCV(HistGradientBoostingClassifier(random_state=seed))
    if name == "logreg":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    if name == "catboost":
        from catboost import CatBoostClassifier

        # its defaults (1,000 rounds, learning rate set from the data, Logloss for two
        # classes and MultiClass for more, chosen by CatBoost from the labels); no
        # console output and no catboost_info/ folder written into the working directory
        return CatBoostClassifier(random_seed=seed, verbose=False, allow_writing_files=False)
    if name == "xgb+cal":
        from xgboost import XGBClassifier

        # binary:logistic / multi:softprob are picked by XGBClassifier from the labels
        return CalibratedClassifierCV(XGBClassifier(random_state=seed))
    raise ValueError(f"unknown baseline {name!r}; expected one of {BASELINES}")


def fit_baseline(
    name: str, seed: int, Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray
) -> tuple[np.ndarray, float]:
    """Fit one baseline; its test probabilities (n x K, classes in sorted order) and fit s.

    Labels are passed as ``0..K'-1`` (the sorted training classes: XGBoost refuses any
    other coding) and the probability columns are put back under the original codes
    ``0..max(label)`` (a class absent from the training rows gets probability 0).
    """
    est = make_baseline(name, seed)
    classes, yenc = np.unique(np.asarray(ytr), return_inverse=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr, yenc.astype(np.int64))
    fit_s = time.perf_counter() - t0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Penc = np.asarray(est.predict_proba(Xte), dtype=np.float64)
    order = np.asarray(getattr(est, "classes_", np.arange(len(classes)))).astype(np.int64)
    P = np.zeros((len(Xte), int(classes.max()) + 1), dtype=np.float64)
    P[:, classes[order]] = Penc
    return P, fit_s


# ============================================================== costwise over HTTP
class CostwiseError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:400]}")
        self.status, self.body = status, body


def _rows(X: np.ndarray) -> list[list[float | None]]:
    return [[None if math.isnan(v) else v for v in row] for row in X.tolist()]


class CostwiseClient:
    """The two calls a user makes: train (JSON rows) and predict. ``http`` is any
    ``httpx.Client`` (a real server's base URL, or a Starlette ``TestClient`` in tests)."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def train(
        self, model: str, X: np.ndarray, y: np.ndarray, params: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], float]:
        body = {"features": _rows(X), "labels": [int(v) for v in y], **(params or {})}
        t0 = time.perf_counter()
        r = self.http.post(f"/v1/models/{model}/versions", params={"mode": "sync"}, json=body)
        wall = time.perf_counter() - t0
        if r.status_code != 201:
            raise CostwiseError(r.status_code, r.text)
        out: dict[str, Any] = r.json()
        return out, wall

    def predict(self, model: str, X: np.ndarray, **costs: Any) -> dict[str, Any]:
        r = self.http.post(f"/v1/models/{model}/predict", json={"instances": _rows(X), **costs})
        if r.status_code != 200:
            raise CostwiseError(r.status_code, r.text)
        out: dict[str, Any] = r.json()
        return out


def _decisions(resp: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(class codes of the decisions, probabilities n x K) from a predict response."""
    classes = [int(c) for c in resp["classes"]]
    index = {c: i for i, c in enumerate(classes)}
    if classes != sorted(classes):
        raise ValueError(f"unexpected class order {classes}")
    preds = resp["predictions"]
    d = np.asarray([index[int(p["decision"])] for p in preds], dtype=np.int64)
    P = np.asarray([p["probabilities"] for p in preds], dtype=np.float64)
    return np.asarray(classes, dtype=np.int64)[d], P


def _model_name(unit: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", unit)[:120]


def _version_note(v: dict[str, Any]) -> dict[str, Any]:
    keep = ("algorithm", "params", "calibration", "training_seconds", "version")
    out = {k: v.get(k) for k in keep}
    data = v.get("data") or {}
    out["data"] = {k: data[k] for k in list(data)[:12] if not isinstance(data[k], list | dict)}
    return out


# ============================================================== units
@dataclass(frozen=True)
class Unit:
    """One (task, seed): ``kind`` is binary, multiclass or rowcost; ``task`` the task
    name (``<set>`` or ``<set>:<k>-vs-rest``); ``dataset`` the CSV stem (or FRAUD)."""

    kind: str
    task: str
    dataset: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.kind}__{self.task.replace(':', '_')}__seed{self.seed}"


def _train_costwise(
    client: CostwiseClient,
    model: str,
    Xtr: np.ndarray,
    ytr: np.ndarray,
    params: dict[str, Any] | None,
    fallback: dict[str, Any] | None,
) -> tuple[dict[str, Any], float, str, str | None]:
    """Train; on a 4xx with ``fallback`` params, record the refusal and train those."""
    label = "default" if not params else json.dumps(params, sort_keys=True)
    try:
        v, wall = client.train(model, Xtr, ytr, params)
        return v, wall, label, None
    except CostwiseError as exc:
        if fallback is None or not 400 <= exc.status < 500:
            raise
        refusal = f"{label} refused: {exc}"
        v, wall = client.train(model, Xtr, ytr, {**(params or {}), **fallback})
        return v, wall, json.dumps({**(params or {}), **fallback}, sort_keys=True), refusal


def run_unit(
    unit: Unit,
    X: np.ndarray,
    y: np.ndarray,
    client: CostwiseClient,
    params: dict[str, Any] | None,
    amount: np.ndarray | None = None,
    baselines: Sequence[str] = BASELINES,
) -> dict[str, Any]:
    """Split, fit costwise (HTTP) and the baselines, decide at every cost setting, score.

    Returns ``{"unit", "rows", "costwise"}``; each row is one (method, setting) with its
    total test cost (``savings`` too for the per-row set), Brier score and fit time.
    """
    idx = np.arange(len(y))
    itr, ite, ytr, yte = stratified_split(idx, y, TEST_SIZE, unit.seed)
    Xtr, Xte = X[itr], X[ite]
    k = int(y.max()) + 1
    base = {
        "kind": unit.kind,
        "task": unit.task,
        "dataset": unit.dataset,
        "seed": unit.seed,
        "n_train": len(ytr),
        "n_test": len(yte),
    }
    rows: list[dict[str, Any]] = []
    info: dict[str, Any] = {}

    # ---- costwise
    fallback = {"algorithm": "ovr_adaboost"} if unit.kind == "multiclass" else None
    model = _model_name(unit.key)
    try:
        v, fit_s, config, refusal = _train_costwise(client, model, Xtr, ytr, params, fallback)
        info = {"config": config, "refusal": refusal, "version": _version_note(v)}
    except CostwiseError as exc:
        info = {
            "config": "default" if not params else json.dumps(params, sort_keys=True),
            "error": str(exc),
        }
        v = {}
    probs: dict[str, np.ndarray] = {}
    fits: dict[str, float] = {}

    settings: list[tuple[str, Any]]
    if unit.kind == "binary":
        settings = [(ratio_label(a, b), (a, b)) for a, b in RATIOS]
    elif unit.kind == "multiclass":
        settings = list(matrices(k, ytr, unit.dataset, unit.seed).items())
    else:
        assert amount is not None
        settings = [("row_costs", amount[ite])]

    cw_cost: dict[str, float] = {}
    if v:
        fits[COSTWISE] = fit_s
        for name, s in settings:
            if unit.kind == "binary":
                resp = client.predict(model, Xte, costs={"c_fp": s[0], "c_fn": s[1]})
            elif unit.kind == "multiclass":
                resp = client.predict(model, Xte, cost_matrix=s.tolist())
            else:
                rc = [{"c_fp": FRAUD_REVIEW_COST, "c_fn": float(a)} for a in s]
                resp = client.predict(model, Xte, row_costs=rc)
            d, P = _decisions(resp)
            probs.setdefault(COSTWISE, P)
            cw_cost[name] = _score(unit.kind, yte, d, s)

    # ---- baselines
    for b in baselines:
        P, fits[b] = fit_baseline(b, unit.seed, Xtr, ytr, Xte)
        probs[b] = P

    for method in (COSTWISE, *baselines):
        if method not in probs:
            continue
        P = probs[method]
        bs = brier(P[:, 1] if k == 2 else P, yte)
        for name, s in settings:
            if method == COSTWISE:
                cost = cw_cost[name]
            else:
                cost = _score(unit.kind, yte, _bayes(unit.kind, P, s), s)
            row = {
                **base,
                "method": method,
                "setting": name,
                "cost": cost,
                "brier": bs,
                "fit_s": fits[method],
            }
            if unit.kind == "rowcost":
                assert amount is not None
                row["savings"] = savings(cost, yte, amount[ite], FRAUD_REVIEW_COST)
            if unit.kind != "rowcost":
                C = s if unit.kind == "multiclass" else None
                row["unit_cost"] = unit_cost(name, C)
            rows.append(row)
    return {"unit": unit.key, **base, "rows": rows, "costwise": info}


def _bayes(kind: str, P: np.ndarray, s: Any) -> np.ndarray:
    if kind == "binary":
        return bayes_binary(P[:, 1], s[0], s[1])
    if kind == "multiclass":
        return bayes_matrix(P, s)
    return bayes_binary(P[:, 1], FRAUD_REVIEW_COST, s)


def _score(kind: str, y: np.ndarray, d: np.ndarray, s: Any) -> float:
    if kind == "binary":
        return binary_cost(y, d, s[0], s[1])
    if kind == "multiclass":
        return matrix_cost(y, d, s)
    return binary_cost(y, d, FRAUD_REVIEW_COST, s)


# ============================================================== summary
def ratio_rows(rows: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Per (task, setting, seed): costwise cost, best baseline (name, cost), ratio."""
    groups: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["kind"] == kind:
            groups[(r["task"], r["setting"], int(r["seed"]))][r["method"]] = r
    out = []
    for (task, setting, seed), by in sorted(groups.items()):
        if COSTWISE not in by or by[COSTWISE].get("cost") is None:
            continue
        base = {m: by[m]["cost"] for m in BASELINES if m in by}
        if not base:
            continue
        best_m = min(base, key=lambda m: base[m])
        cw = float(by[COSTWISE]["cost"])
        unit = float(by[COSTWISE]["unit_cost"])
        out.append(
            {
                "task": task,
                "setting": setting,
                "seed": seed,
                "costwise": cw,
                "best": best_m,
                "best_cost": base[best_m],
                "ratio": cost_ratio(cw, base[best_m], unit),
                "zero_best": base[best_m] == 0,
                "zero": base[best_m] == 0 or cw == 0,
                "best_all": [m for m, c in base.items() if c == base[best_m]],
                **{f"vs_{m}": cost_ratio(cw, c, unit) for m, c in base.items()},
            }
        )
    return out


def _order(order: list[str]) -> Any:
    return lambda s: order.index(s) if s in order else len(order)


def summarise(rows: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Geometric means and goal checks of one kind (binary or multiclass)."""
    rr = ratio_rows(rows, kind)
    if not rr:
        return {"n": 0}
    per_task: dict[str, list[float]] = defaultdict(list)
    per_setting: dict[str, list[float]] = defaultdict(list)
    for r in rr:
        per_task[r["task"]].append(r["ratio"])
        per_setting[r["setting"]].append(r["ratio"])
    task_gm = {t: geomean(v) for t, v in per_task.items()}
    order = [ratio_label(a, b) for a, b in RATIOS] + list(MATRICES)
    setting_gm = {s: geomean(per_setting[s]) for s in sorted(per_setting, key=_order(order))}
    gm = geomean([r["ratio"] for r in rr])
    nonzero = [r["ratio"] for r in rr if not r["zero"]]
    gm_nonzero = geomean(nonzero)
    worst_task = max(task_gm, key=lambda t: task_gm[t])
    worst_setting = max(setting_gm, key=lambda s: setting_gm[s])
    vs = {m: geomean([r[f"vs_{m}"] for r in rr if f"vs_{m}" in r]) for m in BASELINES}
    best_counts: dict[str, int] = defaultdict(int)
    task_best: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rr:  # a tie counts for every baseline of the tie
        for m in r.get("best_all", [r["best"]]):
            best_counts[m] += 1
            task_best[r["task"]][m] += 1
    return {
        "n": len(rr),
        "n_tasks": len(task_gm),
        "geomean": gm,
        # without the triples where costwise's or the best baseline's cost is 0 (their
        # ratio rests on the one-mistake rule: one perfect set can carry the figure)
        "geomean_nonzero": gm_nonzero,
        "n_nonzero": len(nonzero),
        "median": float(np.median([r["ratio"] for r in rr])),
        "per_task": task_gm,
        "per_task_best": {t: max(c, key=lambda m: c[m]) for t, c in task_best.items()},
        "per_setting": setting_gm,
        "within_5pct": sum(1 for v in task_gm.values() if v <= WITHIN),
        "above_1_05": sorted(t for t, v in task_gm.items() if v > WITHIN),
        "above_goal": sorted(t for t, v in task_gm.items() if v > GOAL_WORST),
        "above_1_3": sorted(t for t, v in task_gm.items() if v > 1.3),
        "worst_task": [worst_task, task_gm[worst_task]],
        "worst_setting": [worst_setting, setting_gm[worst_setting]],
        "worst_single": max(rr, key=lambda r: r["ratio"]),
        "vs_each_baseline": vs,
        "best_baseline_counts": dict(best_counts),
        "zero_best": sum(1 for r in rr if r["zero_best"]),
        "zero": sum(1 for r in rr if r["zero"]),
        "goal_geomean_met": bool(gm_nonzero <= GOAL_GEOMEAN),
        "goal_worst_met": bool(task_gm[worst_task] <= GOAL_WORST),
    }


def summarise_rowcost(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-row costs: each method's savings (mean over seeds), the best baseline's, and
    the gap best baseline - costwise (goal: <= ``GOAL_SAVINGS_GAP``)."""
    sv: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "rowcost" and r.get("savings") is not None:
            sv[r["method"]].append(float(r["savings"]))
    if COSTWISE not in sv or not any(m in sv for m in BASELINES):
        return {"n": 0}
    mean = {m: float(np.mean(v)) for m, v in sv.items()}
    best = max((m for m in BASELINES if m in mean), key=lambda m: mean[m])
    gap = mean[best] - mean[COSTWISE]
    return {
        "n": len(sv[COSTWISE]),
        "savings": mean,
        "best": best,
        "gap": gap,
        "goal_gap_met": bool(gap <= GOAL_SAVINGS_GAP),
    }


# ============================================================== server
@contextlib.contextmanager
def costwise_server(tmp: Path) -> Iterator[str]:
    """``costwise serve`` on a free 127.0.0.1 port with a fresh SQLite registry; its URL."""
    port = free_port()
    env = {
        **os.environ,
        "COSTWISE_DATABASE_URL": f"sqlite:///{tmp / 'costwise.db'}",
        "COSTWISE_LOG_LEVEL": "warning",
    }
    for var in ("COSTWISE_API_KEY", "COSTWISE_ENV"):  # a local run needs no auth
        env.pop(var, None)
    cmd = serve_cmd(port)
    log = tmp / "costwise.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"costwise serve exited ({proc.returncode}): "
                        f"{log.read_text(errors='replace')[-2000:]}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url + "/health/ready", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"costwise serve not ready after 120 s; log {log}")
                time.sleep(0.2)
            yield url
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # our own child, by pid
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


# ============================================================== running
def add_binary_plan_options(ap: argparse.ArgumentParser, params_help: str) -> None:
    """``--data-dir``, ``--seeds``, ``--datasets`` (read by :func:`binary_units`) and
    ``--params`` (a JSON object) of the scripts that score the binary tasks alone."""
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--datasets", nargs="*", default=None)
    ap.add_argument("--params", default="{}", help=params_help)


def binary_units(args: argparse.Namespace) -> list[Unit]:
    """The binary units of the options of :func:`add_binary_plan_options`."""
    seeds = list(range(args.seeds))
    return [u for u in plan_units(args.data_dir, args.datasets, seeds, False) if u.kind == "binary"]


def plan_units(
    data_dir: Path, datasets: Sequence[str] | None, seeds: Sequence[int], fraud: bool
) -> list[Unit]:
    names = list(datasets) if datasets else [n for n in available_datasets(data_dir)]
    units = []
    for name in names:
        ds = load_dataset(name, data_dir=data_dir)
        for t in binary_tasks(ds):
            units += [Unit("binary", t.name, name, s) for s in seeds]
        if ds.n_classes > 2:
            units += [Unit("multiclass", name, name, s) for s in seeds]
    if fraud:
        units += [Unit("rowcost", FRAUD, FRAUD, s) for s in seeds]
    return units


_DATA_CACHE: dict[str, Dataset] = {}


def unit_data(unit: Unit, data_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if unit.kind == "rowcost":
        X, y, amount = fraud_data()
        return X, y, amount
    if unit.dataset not in _DATA_CACHE:
        _DATA_CACHE[unit.dataset] = load_dataset(unit.dataset, data_dir=data_dir)
    ds = _DATA_CACHE[unit.dataset]
    if unit.kind == "multiclass":
        return ds.X, ds.y, None
    task = next(t for t in binary_tasks(ds) if t.name == unit.task)
    return task.X, task.y01, None


def run_units(
    units: Sequence[Unit], data_dir: Path, units_dir: Path, params: dict[str, Any] | None
) -> list[str]:
    """Run units against one fresh server, writing ``<units_dir>/<key>.json`` after each."""
    done = []
    with (
        tempfile.TemporaryDirectory(prefix="costwise-quality-") as tmp,
        costwise_server(Path(tmp)) as url,
        httpx.Client(base_url=url, timeout=httpx.Timeout(1800.0)) as http,
    ):
        client = CostwiseClient(http)
        for unit in units:
            X, y, amount = unit_data(unit, data_dir)
            t0 = time.perf_counter()
            res = run_unit(unit, X, y, client, params, amount)
            res["unit_seconds"] = round(time.perf_counter() - t0, 2)
            write_json(units_dir / f"{unit.key}.json", res)
            cw = [r for r in res["rows"] if r["method"] == COSTWISE]
            print(
                f"  {unit.key}: {res['unit_seconds']} s"
                + ("" if cw else f" (costwise: {res['costwise'].get('error')})"),
                flush=True,
            )
            done.append(unit.key)
    return done


def versions() -> dict[str, str]:
    out = {}
    pkgs = ("numpy", "scikit-learn", "lightgbm", "catboost", "xgboost", "scipy", "fastapi")
    for pkg in (*pkgs, "uvicorn", "httpx"):
        out[pkg] = "absent"
        for dist in (pkg, f"{pkg}-cpu"):  # xgboost: the CPU-only wheel is xgboost-cpu
            with contextlib.suppress(md.PackageNotFoundError):
                out[pkg] = md.version(dist)
                break
    return out


def _f(v: float | None, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{nd}f}" if abs(v) < 10 else f"{v:.1f}"


def _task_table(rows: list[dict[str, Any]], kind: str, ratios: list[dict[str, Any]]) -> str:
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    by: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["method"]][r["setting"]].append(r)
    head = ["method", *(f"cost {s}" for s in settings), "Brier", "fit s"]
    if kind == "rowcost":
        head = ["method", "cost", "savings", "Brier", "fit s"]
    lines = []
    for m in METHODS:
        if m not in by:
            continue
        cells: list[str] = [f"**{m}**" if m == COSTWISE else m]
        first = by[m][settings[0]]
        if kind == "rowcost":
            cells += [
                _f(float(np.mean([r["cost"] for r in first]))),
                _f(float(np.mean([r["savings"] for r in first]))),
            ]
        else:
            cells += [_f(float(np.mean([r["cost"] for r in by[m][s]]))) for s in settings]
        cells += [
            _f(float(np.mean([r["brier"] for r in first])), 4),
            _f(float(np.mean([r["fit_s"] for r in first])), 2),
        ]
        lines.append(cells)
    if ratios:
        per = defaultdict(list)
        for r in ratios:
            per[r["setting"]].append(r["ratio"])
        lines.append(
            [
                "costwise / best",
                *(_f(geomean(per[s])) if per[s] else "n/a" for s in settings),
                "",
                "",
            ]
        )
    return md_table(head, lines)


def markdown(res: dict[str, Any]) -> str:
    info, rows = res["info"], res["rows"]
    params = res["costwise_params"]
    cfg = (
        "the service default (no training parameters)"
        if not params
        else (f"training parameters `{json.dumps(params)}`")
    )
    L = [
        f"# Quality benchmark: costwise vs. six baselines, {info['date']}"
        + (" (--quick smoke run)" if res["quick"] else ""),
        "",
        f"- command: `{info['command']}`",
        f"- date: {info['date']}; "
        + (
            "report rebuilt from the checkpoints (--report-only) "
            if res["report_only"]
            else f"wall time of the run: {info['duration_s']} s "
        )
        + f"({res['n_units']} units of (task, seed), {res['n_resumed']} taken from a previous "
        f"run's checkpoints, --jobs {res['jobs']}; the units' own times sum to "
        f"{res['unit_seconds_sum']} s)"
        + (
            f"; **partial: {res['n_planned'] - res['n_units']} planned units not run**"
            if res["n_planned"] > res["n_units"]
            else ""
        ),
        *([f"- note: {res['note']}"] if res.get("note") else []),
        f"- machine: {info['machine']}; load average at the start / end: "
        f"{res['loadavg'][0]} / {res['loadavg'][1]}",
        "- versions: Python {python}, ".format(**info)
        + ", ".join(f"{k} {v}" for k, v in res["versions"].items())
        + f"; costwise git {info['git_commit']}",
        f"- costwise: {cfg}, through a real `costwise serve` (uvicorn, one worker, "
        "127.0.0.1, temporary SQLite registry): JSON rows to `POST /v1/models/{name}/"
        "versions?mode=sync`, then one `POST .../predict` per cost setting; its fit time "
        "is the wall time of the training request (JSON encoding, HTTP and registering "
        "included). Baselines: `CalibratedClassifierCV` (sigmoid, cv=5) around "
        "AdaBoost(stumps) / LGBMClassifier() / HistGradientBoostingClassifier() / "
        "XGBClassifier(); CatBoostClassifier() with its defaults (uncalibrated, as it "
        "comes); `StandardScaler + LogisticRegression(max_iter=1000)` uncalibrated; each decides "
        "by the Bayes rule on its probabilities. Fit times are wall seconds on a shared, "
        "loaded machine: compare them within this run only.",
        f"- splits: stratified {round((1 - TEST_SIZE) * 100)}/{round(TEST_SIZE * 100)}, "
        f"seeds {res['seeds']}; costs are totals on the test rows, averaged over seeds. "
        "Two-class sets: the positive class is `1` (the minority); one-vs-rest tasks "
        "`<set>:<k>-vs-rest`: class k positive.",
        "- costwise learns from every row it is sent (70% of the data, like the "
        "baselines) unless `evaluation_fraction` is given: since issue 13 its default "
        "reports out-of-fold metrics instead of holding 20% out (before: 56% of the data); "
        "each task's costwise line gives the version's params.",
        "- ratio = costwise cost / best baseline cost per (task, cost setting, seed); when "
        "either cost is 0, `(cost + m) / (best + m)` with m the cheapest single mistake of "
        "the setting (see the module docstring). `OMP_WAIT_POLICY=PASSIVE` (see there).",
        "",
    ]
    for kind, title in (
        ("binary", "Two-class tasks (c_fp:c_fn)"),
        ("multiclass", "Multiclass sets (K x K matrices)"),
    ):
        s = res["summary"].get(kind, {"n": 0})
        if not s.get("n"):
            continue
        L += [f"## {title}: summary", ""]
        L += summary_lines(s, kind)
        L += ["", overview_table(rows, kind), ""]
    fr = [r for r in rows if r["kind"] == "rowcost"]
    if fr:
        L += [
            "## Per-row costs (synthetic fraud-like set, `row_costs`)",
            "",
            f"20,000 rows, 9 features (8 normal + log amount), about "
            f"{res['fraud_positive_rate']:.1%} fraud; a missed fraud costs its amount, a "
            f"false alarm {FRAUD_REVIEW_COST:g}; costwise decides with `row_costs`, the "
            "baselines at the same per-row thresholds `p >= c_fp / (c_fp + amount)`. "
            "savings = 1 - cost / min(cost of flagging nothing, cost of flagging "
            "everything), mean over seeds.",
            "",
            _task_table(fr, "rowcost", []),
            "",
            *(
                rowcost_lines(res["summary"]["rowcost"])
                if res["summary"]["rowcost"].get("n")
                else []
            ),
            "",
        ]
    for kind, title in (("binary", "Two-class tasks"), ("multiclass", "Multiclass sets")):
        kr = [r for r in rows if r["kind"] == kind]
        if not kr:
            continue
        rr = ratio_rows(rows, kind)
        L += [
            f"## {title}: one table per task",
            "",
            "Total test cost per cost setting (mean over seeds), Brier score, fit "
            "seconds (means over seeds); last row: geometric mean over seeds of costwise "
            "cost / best baseline cost.",
            "",
        ]
        for task in dict.fromkeys(r["task"] for r in kr):
            tr = [r for r in kr if r["task"] == task]
            note = res["costwise_notes"].get(f"{kind}:{task}", "")
            L += [
                f"### {task}",
                "",
                note and f"costwise: {note}",
                "",
                _task_table(tr, kind, [r for r in rr if r["task"] == task]),
                "",
            ]
    return "\n".join(x for x in L if x is not None) + "\n"


def _logreg_rank(ratios: Sequence[dict[str, Any]]) -> str:
    """Logistic regression's rank among the baselines of one task ("1 of 6": the best),
    by each baseline's geometric mean cost relative to costwise's: how linear a task is."""
    gm = {
        m: geomean([r[f"vs_{m}"] for r in ratios if f"vs_{m}" in r])
        for m in BASELINES
        if any(f"vs_{m}" in r for r in ratios)
    }
    if "logreg" not in gm:
        return "n/a"
    # vs_m = costwise / m: the larger, the cheaper baseline m was
    rank = 1 + sum(1 for m, v in gm.items() if v > gm["logreg"])
    return f"{rank} of {len(gm)}"


def overview_table(rows: Sequence[dict[str, Any]], kind: str) -> str:
    """One line per task: costwise / best (geometric mean over settings and seeds), its
    worst setting, the baseline best most often, and Brier scores (means over seeds)."""
    rr = ratio_rows(rows, kind)
    brier_by: dict[tuple[str, str], list[float]] = defaultdict(list)
    seen = set()
    for r in rows:
        key = (r["task"], r["method"], r["seed"])
        if r["kind"] == kind and key not in seen:
            seen.add(key)
            brier_by[(r["task"], r["method"])].append(float(r["brier"]))
    lines = []
    for task in dict.fromkeys(r["task"] for r in rr):
        t = [r for r in rr if r["task"] == task]
        per: dict[str, list[float]] = defaultdict(list)
        wins: dict[str, int] = defaultdict(int)
        for r in t:
            per[r["setting"]].append(r["ratio"])
            for m in r.get("best_all", [r["best"]]):  # a tie counts for each
                wins[m] += 1
        worst = max(per, key=lambda k: geomean(per[k]))
        bb = {m: float(np.mean(brier_by[(task, m)])) for m in BASELINES if brier_by[(task, m)]}
        best_b = min(bb, key=lambda m: bb[m])
        lines.append(
            [
                task,
                _f(geomean([r["ratio"] for r in t])),
                f"{worst} ({_f(geomean(per[worst]))})",
                max(wins, key=lambda m: wins[m]),
                _logreg_rank(t),
                _f(float(np.mean(brier_by[(task, COSTWISE)])), 4),
                f"{_f(bb[best_b], 4)} ({best_b})",
            ]
        )
    return md_table(
        [
            "task",
            "costwise / best",
            "worst setting",
            "best baseline (most often)",
            "logreg's rank",
            "costwise Brier",
            "best baseline Brier",
        ],
        lines,
    )


def summary_lines(s: dict[str, Any], kind: str) -> list[str]:
    g_ok = "met" if s["goal_geomean_met"] else "**not met**"
    w_ok = "met" if s["goal_worst_met"] else "**not met**"
    ws = s["worst_single"]
    per_setting = ", ".join(f"{k} {_f(v)}" for k, v in s["per_setting"].items())
    vs = ", ".join(f"{m} {_f(v)}" for m, v in s["vs_each_baseline"].items())
    above = s["above_1_05"]
    above_txt = ", ".join(
        f"{t} {_f(s['per_task'][t])} ({s['per_task_best'][t]})"
        for t in sorted(above, key=lambda t: -s["per_task"][t])
    )
    return [
        f"- costwise cost / best baseline cost over {s['n']} (task, setting, seed) triples "
        f"on {s['n_tasks']} tasks: geometric mean **{_f(s['geomean'])}**, without the "
        f"{s['n'] - s['n_nonzero']} triples where costwise's or the best baseline's cost "
        f"is 0 **{_f(s['geomean_nonzero'])}** (goal <= {GOAL_GEOMEAN:.2f}: {g_ok}), "
        f"median **{_f(s['median'])}**",
        f"- tasks within 5% of the best baseline (task geometric mean <= {WITHIN}): "
        f"**{s['within_5pct']} of {s['n_tasks']}**; above {GOAL_WORST}: "
        f"{len(s['above_goal'])} ({', '.join(s['above_goal']) or 'none'}); worst task "
        f"{s['worst_task'][0]} at {_f(s['worst_task'][1])} (goal: none above {GOAL_WORST}: "
        f"{w_ok})",
        f"- tasks above {WITHIN} (task geometric mean, the baseline best most often there): "
        + (above_txt or "none"),
        f"- per cost setting (geometric mean over tasks and seeds): {per_setting}; worst "
        f"setting {s['worst_setting'][0]} ({_f(s['worst_setting'][1])}); worst single "
        f"ratio {_f(ws['ratio'])} ({ws['task']}, {ws['setting']}, seed {ws['seed']}: "
        f"{_f(ws['costwise'])} vs {ws['best']} {_f(ws['best_cost'])})",
        f"- costwise against each baseline (geometric mean of cost ratios): {vs}",
        "- best baseline per triple (a tie counts for each tied baseline): "
        + ", ".join(
            f"{m} {n}" for m, n in sorted(s["best_baseline_counts"].items(), key=lambda x: -x[1])
        )
        + f"; triples where the best baseline cost 0: {s['zero_best']}",
        "- costwise configuration used: "
        + "; ".join(f"{c} ({n} units)" for c, n in s.get("configs", {}).items()),
    ]


def rowcost_lines(s: dict[str, Any]) -> list[str]:
    """The per-row-cost summary: savings of every method, the gap to the best baseline."""
    ok = "met" if s["goal_gap_met"] else "**not met**"
    return [
        "- savings (mean over seeds): "
        + ", ".join(f"{m} {v:.4f}" for m, v in s["savings"].items())
        + f"; best baseline {s['best']}; gap best baseline - costwise **{s['gap']:+.4f}** "
        f"(goal <= {GOAL_SAVINGS_GAP}: {ok})",
    ]


def docs_section(res: dict[str, Any], md_path: Path) -> str:
    params = res["costwise_params"]
    title = "default" if not params else json.dumps(params)
    L = [
        f"### Quality (issue 31): costwise {title}, {res['info']['date']}",
        "",
        f"`{res['info']['command']}` on {res['info']['machine']}, costwise git "
        f"{res['info']['git_commit']}; full tables in "
        f"[{md_path.name}](../bench/results/quality/{md_path.name})."
        + (f" {res['note']}." if res.get("note") else ""),
        "",
        "What it measures: costwise trained through the HTTP API (JSON rows, "
        + ("no training parameters" if not params else "these training parameters")
        + ") against `CalibratedClassifierCV` around AdaBoost(stumps), LightGBM, "
        "HistGradientBoosting and XGBoost, CatBoost's defaults, and standardised logistic "
        "regression, every method deciding by the Bayes rule on its probabilities; the "
        "total test cost at c_fp:c_fn = 10:1, 3:1, 1:1, 1:3, 1:10 (multiclass sets: 0-1, "
        "miss-10 and random K x K matrices), stratified 70/30 splits. Ratio = costwise "
        "cost / best baseline cost per (task, setting, seed); goals of issue 31: geometric "
        f"mean without zero-cost triples <= {GOAL_GEOMEAN:.2f}, no task above {GOAL_WORST}, "
        f"per-row savings within {GOAL_SAVINGS_GAP} of the best baseline's. Re-run: "
        "`.venv/bin/python -m bench quality.baselines --data-dir ../shared/datasets "
        "--seeds 3` (module docstring: options, zero-cost rule, threads).",
        "",
    ]
    for kind, title2 in (("binary", "two-class"), ("multiclass", "multiclass")):
        s = res["summary"].get(kind, {"n": 0})
        if s.get("n"):
            L += [f"**{title2}**:", ""] + summary_lines(s, kind) + [""]
    rc = res["summary"].get("rowcost", {"n": 0})
    if rc.get("n"):
        L += ["**per-row costs** (synthetic fraud):", "", *rowcost_lines(rc), ""]
    return "\n".join(L)


DOCS_BEGIN = "<!-- bench_quality:{label}:begin -->"
DOCS_END = "<!-- bench_quality:{label}:end -->"


def update_docs(path: Path, label: str, text: str) -> None:
    """Replace (or append) this benchmark's own marked section of docs/benchmarks.md."""
    b, e = DOCS_BEGIN.format(label=label), DOCS_END.format(label=label)
    old = path.read_text() if path.is_file() else "# Benchmarks\n"
    block = f"{b}\n{text.rstrip()}\n{e}"
    if b in old and e in old:
        new = old[: old.index(b)] + block + old[old.index(e) + len(e) :]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench quality.baselines", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--datasets", nargs="+", default=None, help="CSV stems (default: all)")
    ap.add_argument("--seeds", type=int, default=3, help="number of splits (seeds 0..N-1)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {', '.join(QUICK_SETS)} and the fraud set, one seed",
    )
    ap.add_argument("--no-fraud", action="store_true", help="skip the synthetic per-row set")
    ap.add_argument(
        "--kinds",
        nargs="+",
        default=None,
        choices=("binary", "multiclass", "rowcost"),
        help="run only these kinds of task (default: all)",
    )
    ap.add_argument(
        "--costwise-params",
        type=json.loads,
        default=None,
        help="JSON object of training parameters instead of the default",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes (each with its own server); >1 inflates fit times",
    )
    ap.add_argument("--resume", action="store_true", help="reuse finished units from --units-dir")
    ap.add_argument(
        "--units-dir",
        type=Path,
        default=None,
        help="checkpoints (default: bench/results/quality/baselines-units-<label>)",
    )
    ap.add_argument(
        "--label",
        default=None,
        help="suffix of the result files (default: '' for the service default, "
        "'params' with --costwise-params, 'quick' with --quick)",
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="run nothing: report the units already in --units-dir (partial)",
    )
    ap.add_argument(
        "--note",
        default=None,
        help="a line for the report's header (e.g. with --report-only: which "
        "run measured the units and how long it took)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    ap.add_argument(
        "--docs",
        type=Path,
        default=REPO_ROOT / "docs" / "benchmarks.md",
        help="where the summary section goes ('-': nowhere)",
    )
    args = ap.parse_args(argv)
    started = time.time()
    if args.costwise_params is not None and not isinstance(args.costwise_params, dict):
        ap.error("--costwise-params must be a JSON object")
    if not args.data_dir.is_dir():
        print(
            f"bench_quality: skipped: the datasets folder {args.data_dir} does not exist "
            "(pass --data-dir)",
            file=sys.stderr,
        )
        return 0
    seeds = [0] if args.quick else list(range(args.seeds))
    datasets = args.datasets or (list(QUICK_SETS) if args.quick else None)
    label = (
        args.label
        if args.label is not None
        else ("quick" if args.quick else "params" if args.costwise_params else "")
    )
    units_dir = args.units_dir or result_path(__file__, f"units-{label or 'default'}", "", args.out)
    units = plan_units(args.data_dir, datasets, seeds, fraud=not args.no_fraud)
    if args.kinds:
        units = [u for u in units if u.kind in args.kinds]
    units.sort(key=lambda u: u.seed)  # seed by seed: a stopped run has whole seeds done
    n_planned = len(units)
    if args.report_only:
        units = [u for u in units if (units_dir / f"{u.key}.json").is_file()]
    elif not args.resume and units_dir.is_dir():
        for p in units_dir.glob("*.json"):
            p.unlink()
    todo = [u for u in units if not (units_dir / f"{u.key}.json").is_file()]
    n_resumed = len(units) - len(todo)
    loadavg0 = [round(x, 2) for x in os.getloadavg()]
    print(
        f"{len(units)} units ({n_resumed} done before), {args.jobs} job(s); "
        f"checkpoints in {units_dir}",
        flush=True,
    )
    if todo:
        if args.jobs <= 1:
            run_units(todo, args.data_dir, units_dir, args.costwise_params)
        else:
            chunks = [todo[i :: args.jobs] for i in range(args.jobs)]
            with ProcessPoolExecutor(args.jobs) as ex:
                futs = [
                    ex.submit(run_units, c, args.data_dir, units_dir, args.costwise_params)
                    for c in chunks
                    if c
                ]
                for f in futs:
                    f.result()
    results = [json.loads((units_dir / f"{u.key}.json").read_text()) for u in units]
    rows = [r for res in results for r in res["rows"]]
    notes: dict[str, str] = {}
    for res in results:
        cw = res["costwise"]
        v = cw.get("version") or {}
        note = f"config {cw.get('config')}"
        if cw.get("refusal"):
            note += f"; {cw['refusal'][:300]}"
        if cw.get("error"):
            note += f"; error: {cw['error'][:300]}"
        if v:
            note += (
                f"; version (seed {res['seed']}): algorithm {v.get('algorithm')}, "
                f"params `{json.dumps(v.get('params'))}`"
            )
        notes.setdefault(f"{res['kind']}:{res['task']}", note)
    info = run_info(argv, started, module="bench.quality.baselines")
    fraud_y = fraud_data()[1]
    res_all: dict[str, Any] = {
        "info": info,
        "quick": args.quick,
        "seeds": seeds,
        "jobs": args.jobs,
        "costwise_params": args.costwise_params,
        "versions": versions(),
        "n_units": len(units),
        "n_resumed": n_resumed,
        "n_planned": n_planned,
        "report_only": args.report_only,
        "note": args.note,
        "loadavg": [loadavg0, [round(x, 2) for x in os.getloadavg()]],
        "fraud_positive_rate": float(fraud_y.mean()),
        "summary": {
            **{k: summarise(rows, k) for k in ("binary", "multiclass")},
            "rowcost": summarise_rowcost(rows),
        },
        "unit_seconds_sum": round(sum(float(r.get("unit_seconds", 0)) for r in results), 1),
        "costwise_notes": notes,
        "units": [{k: v for k, v in r.items() if k != "rows"} for r in results],
        "rows": rows,
    }
    for kind in ("binary", "multiclass"):
        configs: dict[str, int] = defaultdict(int)
        for r in results:
            if r["kind"] == kind:
                cw = r["costwise"]
                configs[
                    cw.get("config", "?")
                    + (" after the default was refused" if cw.get("refusal") else "")
                    + (" (failed)" if cw.get("error") else "")
                ] += 1
        if res_all["summary"][kind].get("n"):
            res_all["summary"][kind]["configs"] = dict(configs)
    stem = result_path(__file__, label, "", args.out)
    stem.parent.mkdir(parents=True, exist_ok=True)
    # the raw rows go to the CSV only (the JSON: run facts, summaries, per-unit notes)
    write_json(stem.with_suffix(".json"), {k: v for k, v in res_all.items() if k != "rows"})
    cols = [
        "kind",
        "task",
        "dataset",
        "seed",
        "n_train",
        "n_test",
        "method",
        "setting",
        "cost",
        "savings",
        "brier",
        "fit_s",
        "unit_cost",
    ]
    write_csv(stem.with_suffix(".csv"), rows, cols)
    text = markdown(res_all)
    stem.with_suffix(".md").write_text(text)
    if str(args.docs) != "-":
        update_docs(args.docs, label or "default", docs_section(res_all, stem.with_suffix(".md")))
    for kind in ("binary", "multiclass"):
        s = res_all["summary"][kind]
        if s.get("n"):
            print(f"{kind}: " + "\n  ".join(summary_lines(s, kind)))
    if res_all["summary"]["rowcost"].get("n"):
        print("rowcost: " + "\n  ".join(rowcost_lines(res_all["summary"]["rowcost"])))
    print(f"written: {stem}.md, .json, .csv; took {info['duration_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
