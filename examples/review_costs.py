"""A review action priced per row against the two-action decision, in money, on held-out rows.

Everything goes through the HTTP API of a running service (``make run``)::

    python examples/review_costs.py [--data CSV] [--label COLUMN] [--amount COLUMN]
        [--review-cost 50] [--decline-share 0.1] [--url http://127.0.0.1:8000]

The default data set is the German credit data (``german.csv`` of the shared data sets:
``$COSTWISE_DATASETS_DIR``, else ``../shared/datasets`` from the repository root; 1,000
applicants, ``label`` 1 = bad credit, 300 of them; ``f5`` is the credit amount in DM).
``--data examples/fraud.csv --label fraud --amount amount`` runs it on the bundled fraud
example. The rows are split (seeded, stratified) into 70% to train and 30% held out. The
positive class is the risky one (bad credit, fraud). The cost model, per held-out row:

- **approve** (``negative``) costs the row's ``amount`` when the truth is positive (the
  loan defaults, the fraud goes through), nothing otherwise;
- **decline** (``positive``) costs ``--decline-share`` of the amount when the truth is
  negative (the margin of a good customer turned away), nothing otherwise;
- **review** costs ``--review-cost`` whatever the truth: an analyst looks at the case and
  the right call is made, at the price of the analyst's time.

The held-out rows are sent to ``/predict`` twice with the same per-row ``row_costs``
(``c_fn`` = amount, ``c_fp`` = share x amount): without and with ``c_review``. Each
decision is then priced with the cost model above against the true class. The outcomes
of the second run are reported, and the version's monitoring (``actions``: per action,
how often and what it cost) is read back: its realised cost per action is the same
money. The model is trained once across runs (the version gets the alias
``data-<digest>`` of its training rows and parameters).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("COSTWISE_DATASETS_DIR") or ROOT.parent / "shared" / "datasets")
HELD_OUT = 0.3
PARAMS: dict[str, Any] = {"algorithm": "adaboost", "n_estimators": 100, "calibration": "platt"}
ACTIONS = ("negative", "positive", "review")  # approve, decline, review


def split(labels: list[str], seed: int = 0) -> tuple[list[int], list[int]]:
    """Stratified indices (train, held out): ``HELD_OUT`` of each class held out."""
    rng = np.random.default_rng(seed)
    y = np.array(labels)
    held: list[int] = []
    for value in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == value))
        held += members[: round(HELD_OUT * len(members))].tolist()
    held_set = set(held)
    return [i for i in range(len(labels)) if i not in held_set], sorted(held)


def price(
    actions: list[str], labels: list[int], amounts: list[float], review: float, share: float
) -> dict[str, Any]:
    """What the actions cost under the cost model of the module docstring."""
    per_action: dict[str, float] = dict.fromkeys(ACTIONS, 0.0)
    counts = dict.fromkeys(ACTIONS, 0)
    for action, y, amount in zip(actions, labels, amounts, strict=True):
        if action == "negative":
            cost = amount if y == 1 else 0.0
        elif action == "positive":
            cost = share * amount if y == 0 else 0.0
        else:
            cost = review
        per_action[action] += cost
        counts[action] += 1
    n = len(actions)
    return {
        "money": round(sum(per_action.values()), 2),
        "approved": counts["negative"],
        "declined": counts["positive"],
        "reviewed": counts["review"],
        "reviewed_share": round(counts["review"] / n, 4),
        "bad_approved": sum(
            a == "negative" and y == 1 for a, y in zip(actions, labels, strict=True)
        ),
        "good_declined": sum(
            a == "positive" and y == 0 for a, y in zip(actions, labels, strict=True)
        ),
        "money_by_action": {a: round(per_action[a], 2) for a in ACTIONS},
    }


def trained_version(http: Any, model: str, train_csv: str, label: str) -> Any:
    """The version trained on ``train_csv``: the one its data alias names if an earlier
    run registered it, else a new one (then given that alias)."""
    digest = hashlib.sha256(train_csv.encode() + json.dumps(PARAMS).encode()).hexdigest()
    alias = f"data-{digest[:16]}"
    known = http.get(f"/v1/models/{model}")
    if known.status_code == 200 and alias in known.json()["aliases"]:
        found = http.get(f"/v1/models/{model}/versions/{known.json()['aliases'][alias]}")
        found.raise_for_status()
        return found.json()
    trained = http.post(
        f"/v1/models/{model}/versions",
        params={"mode": "sync"},
        files={"file": ("train.csv", train_csv.encode(), "text/csv")},
        data={"label_column": label, "params": json.dumps(PARAMS)},
    )
    trained.raise_for_status()
    version = trained.json()
    moved = http.put(f"/v1/models/{model}/aliases/{alias}", json={"version": version["version"]})
    moved.raise_for_status()
    return version


def measure(
    http: Any,
    model: str = "credit-review",
    data: Path = DATASETS / "german.csv",
    label: str = "label",
    amount: str = "f5",
    review: float = 50.0,
    share: float = 0.1,
) -> dict[str, Any]:
    """Train on 70% through ``http`` (an httpx-style client), decide the held-out rows
    with two actions and with review, price both, and read monitoring back."""
    text = data.read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    labels_all = [r[label] for r in rows]
    train_idx, held_idx = split(labels_all)
    lines = text.splitlines()
    train_csv = "\n".join([lines[0]] + [lines[1 + i] for i in train_idx]) + "\n"
    version = trained_version(http, model, train_csv, label)
    held = [rows[i] for i in held_idx]
    records = [{k: float(v) if v != "" else None for k, v in r.items() if k != label} for r in held]
    labels = [int(float(r[label])) for r in held]
    amounts = [float(r[amount]) for r in held]
    row_costs = [{"c_fp": share * a, "c_fn": a} for a in amounts]
    setting = hashlib.sha256(json.dumps([review, share, amount]).encode()).hexdigest()[:8]
    out: dict[str, Any] = {
        "data": data.name,
        "model": model,
        "version": version["version"],
        "train_rows": len(train_idx),
        "held_out_rows": len(held),
        "held_out_positive": sum(labels),
        "review_cost": review,
        "decline_share": share,
        "results": {},
    }
    for name, extra in (("two actions", {}), ("with review", {"c_review": review})):
        ids = [f"{setting}-{'r' if extra else 'd'}{i}" for i in held_idx]
        body = {
            "records": records,
            "row_costs": [{**c, **extra} for c in row_costs],
            "version": version["version"],
            "ids": ids,
        }
        response = http.post(f"/v1/models/{model}/predict", json=body)
        response.raise_for_status()
        predictions = response.json()["predictions"]
        if extra:
            actions = [p["action"] for p in predictions]
        else:  # two actions: the decided class is the action
            actions = [ACTIONS[int(p["decision"])] for p in predictions]
        out["results"][name] = price(actions, labels, amounts, review, share)
        if extra:  # report the outcomes: monitoring prices each action taken
            outcomes = [{"id": i, "label": y} for i, y in zip(ids, labels, strict=True)]
            sent = http.post(f"/v1/models/{model}/outcomes", json={"outcomes": outcomes})
            sent.raise_for_status()
    two, three = out["results"]["two actions"]["money"], out["results"]["with review"]["money"]
    out["saved_by_review"] = round(two - three, 2)
    out["monitoring_actions"] = _monitored(http, model, version["version"])
    return out


def _monitored(http: Any, model: str, version: int) -> dict[str, Any]:
    """Per action, its realised cost in the version's monitoring (all logged rows)."""
    for _ in range(100):  # the log is written off the request path: wait for the rows
        report = http.get(f"/v1/models/{model}/monitoring", params={"version": version})
        if report.status_code == 200:
            actions = report.json()["versions"][0]["total"]["actions"] or []
            if actions and all(a["labelled"] == a["taken"] for a in actions):
                return {a["action"]: round(a["realised_cost"], 2) for a in actions}
        time.sleep(0.1)
    raise RuntimeError("monitoring did not report the logged actions within 10 s")


def main() -> None:
    import argparse

    import httpx  # installed with costwise

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--api-key", help="when the service runs with COSTWISE_AUTH=on")
    p.add_argument("--model", default="credit-review")
    p.add_argument("--data", type=Path, default=DATASETS / "german.csv")
    p.add_argument("--label", default="label")
    p.add_argument("--amount", default="f5", help="the amount column (german.csv: f5)")
    p.add_argument("--review-cost", type=float, default=50.0)
    p.add_argument("--decline-share", type=float, default=0.1)
    args = p.parse_args()
    if not args.data.exists():
        sys.exit(f"{args.data}: no such file (set COSTWISE_DATASETS_DIR or pass --data)")
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    with httpx.Client(base_url=args.url, headers=headers, timeout=300) as http:
        figures = measure(
            http, args.model, args.data, args.label, args.amount, args.review_cost,
            args.decline_share,
        )  # fmt: skip
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
