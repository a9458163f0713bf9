"""Per-row costs against one fixed threshold, in money, on held-out rows of fraud.csv.

Everything goes through the HTTP API of a running service (``make run``)::

    python examples/fraud_costs.py [--url http://127.0.0.1:8000] [--api-key KEY]

The rows of ``examples/fraud.csv`` are split (seeded, stratified) into 80% to train
and 20% held out. The held-out rows are sent to ``/predict`` three times; only the
costs differ:

- ``0-1``: no costs (the usual threshold 1/2);
- ``fixed``: one cost setting for every row, a false alarm costing ``C_FP`` (5 EUR:
  a review and an annoyed customer) and a miss the mean transaction amount of the
  training rows (one threshold, ``c_fp / (c_fp + c_fn)``);
- ``per-row``: ``row_costs``, a miss costing that transaction's ``amount``.

Each decision is then priced with what it really costs: ``C_FP`` per false alarm and
the amount of every fraud let through. The model is trained once; the costs only move
the thresholds. It is trained once across runs too: the version gets the alias
``data-<digest>`` (of the training rows and parameters), and a later run that finds the
alias uses that version instead of registering a new one.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CSV = Path(__file__).with_name("fraud.csv")
LABEL = "fraud"
C_FP = 5.0
HELD_OUT = 0.2


def split(rows: list[dict[str, str]], seed: int = 0) -> tuple[list[int], list[int]]:
    """Stratified indices (train, held out): ``HELD_OUT`` of each class held out."""
    rng = np.random.default_rng(seed)
    labels = np.array([r[LABEL] for r in rows])
    held: list[int] = []
    for value in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == value))
        held += members[: round(HELD_OUT * len(members))].tolist()
    held_set = set(held)
    return [i for i in range(len(rows)) if i not in held_set], sorted(held)


def _record(row: dict[str, str]) -> dict[str, float | None]:
    return {k: (float(v) if v != "" else None) for k, v in row.items() if k != LABEL}


def money(decisions: list[int], labels: list[int], amounts: list[float]) -> dict[str, Any]:
    """What the decisions cost: C_FP per false alarm, the amount of each missed fraud."""
    fp = sum(d == 1 and y == 0 for d, y in zip(decisions, labels, strict=True))
    missed = [a for d, y, a in zip(decisions, labels, amounts, strict=True) if d == 0 and y == 1]
    caught = sum(d == 1 and y == 1 for d, y in zip(decisions, labels, strict=True))
    return {
        "money": round(fp * C_FP + sum(missed), 2),
        "false_alarms": fp,
        "frauds_caught": caught,
        "frauds_missed": len(missed),
        "missed_amount": round(sum(missed), 2),
    }


def data_alias(train_csv: str, params: dict[str, Any]) -> str:
    """The alias that names the version trained on these rows with these parameters."""
    digest = hashlib.sha256(
        train_csv.encode() + json.dumps(params, sort_keys=True).encode()
    ).hexdigest()
    return f"data-{digest[:16]}"


def train(http: Any, model: str, train_csv: str, params: dict[str, Any]) -> Any:
    """A new version of ``model`` trained on ``train_csv`` (label column ``fraud``)."""
    trained = http.post(
        f"/v1/models/{model}/versions",
        params={"mode": "sync"},
        files={"file": ("train.csv", train_csv.encode(), "text/csv")},
        data={"label_column": LABEL, "params": json.dumps(params)},
    )
    trained.raise_for_status()
    return trained.json()


def trained_version(http: Any, model: str, train_csv: str, params: dict[str, Any]) -> Any:
    """The version of ``model`` trained on ``train_csv`` with ``params``: the one the alias
    :func:`data_alias` points to if an earlier run registered it, else a new one (then
    given that alias), so that running the example again registers nothing."""
    alias = data_alias(train_csv, params)
    known = http.get(f"/v1/models/{model}")
    if known.status_code == 200 and alias in known.json()["aliases"]:
        found = http.get(f"/v1/models/{model}/versions/{known.json()['aliases'][alias]}")
        found.raise_for_status()
        return found.json()
    version = train(http, model, train_csv, params)
    moved = http.put(f"/v1/models/{model}/aliases/{alias}", json={"version": version["version"]})
    moved.raise_for_status()
    return version


def measure(http: Any, model: str = "fraud-example", n_estimators: int = 100) -> dict[str, Any]:
    """Train on 80% through ``http`` (an httpx-style client), decide the held-out rows
    three ways, and price each way. Returns the figures (JSON-able)."""
    text = CSV.read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    train_idx, held_idx = split(rows)
    header = text.splitlines()[0]
    lines = text.splitlines()[1:]
    train_csv = "\n".join([header] + [lines[i] for i in train_idx]) + "\n"
    params = {"n_estimators": n_estimators, "calibration": "platt"}
    version = trained_version(http, model, train_csv, params)
    held = [rows[i] for i in held_idx]
    records = [_record(r) for r in held]
    labels = [int(r[LABEL]) for r in held]
    amounts = [float(r["amount"]) for r in held]
    mean_amount = float(np.mean([float(rows[i]["amount"]) for i in train_idx]))
    settings: dict[str, dict[str, Any]] = {
        "0-1": {},
        "fixed": {"costs": {"c_fp": C_FP, "c_fn": round(mean_amount, 2)}},
        "per-row": {"row_costs": [{"c_fp": C_FP, "c_fn": a} for a in amounts]},
    }
    out: dict[str, Any] = {
        "model": model,
        "version": version["version"],
        "train_rows": len(train_idx),
        "held_out_rows": len(held_idx),
        "held_out_frauds": sum(labels),
        "held_out_fraud_amount": round(
            sum(a for a, y in zip(amounts, labels, strict=True) if y), 2
        ),
        "evaluation_metrics": version["metrics"],
        "c_fp": C_FP,
        "fixed_c_fn": round(mean_amount, 2),
        "results": {},
    }
    for name, costs in settings.items():
        body = {"records": records, "version": version["version"], **costs}
        response = http.post(f"/v1/models/{model}/predict", json=body)
        response.raise_for_status()
        decisions = [p["decision"] for p in response.json()["predictions"]]
        out["results"][name] = money(decisions, labels, amounts)
    out["results"]["flag nothing"] = money([0] * len(labels), labels, amounts)
    return out


def run_cli(
    doc: str, model: str, timeout: float, work: Callable[[Any, str], dict[str, Any]]
) -> None:
    """An example's command line: ``work(http, model)`` against ``--url``, printed as JSON."""
    import httpx  # installed with costwise

    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--api-key", help="when the service runs with COSTWISE_AUTH=on")
    p.add_argument("--model", default=model)
    args = p.parse_args()
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    with httpx.Client(base_url=args.url, headers=headers, timeout=timeout) as http:
        print(json.dumps(work(http, args.model), indent=2))


def main() -> None:
    run_cli(__doc__, "fraud-example", 120, measure)


if __name__ == "__main__":
    main()
