"""A better challenger found, proven and promoted, in money, on fraud.csv.

Everything goes through the HTTP API of a running service (``make run``)::

    python examples/challenger.py [--url http://127.0.0.1:8000] [--api-key KEY]

The rows of ``examples/fraud.csv`` are split as in ``fraud_costs.py`` (80% to train,
20% held out, seeded and stratified). The champion is trained on the first 600 training
rows, the challenger on all 4,800; ``production`` points at the champion and the
challenger shadows it. The held-out rows are then served (a false alarm costs 5 EUR, a
miss the transaction's amount: ``row_costs``), their outcomes reported, the two versions
compared on the shadow pairs, and the challenger put to the promotion gate (first with a
rule asking for more labelled pairs than there are, then with the default rule); what
it answered on the held-out fifth is in docs/challenger.md.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

CSV = Path(__file__).with_name("fraud.csv")
LABEL = "fraud"
C_FP = 5.0
PARAMS = {"algorithm": "adaboost", "n_estimators": 100, "calibration": "platt"}


def _split() -> tuple[str, list[int], list[int], list[dict[str, str]]]:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from fraud_costs import split  # the same split as the per-row cost example

    text = CSV.read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    train, held = split(rows)
    return text, train, held, rows


def _train(http: Any, model: str, text: str, idx: list[int]) -> int:
    header, lines = text.splitlines()[0], text.splitlines()[1:]
    body = "\n".join([header] + [lines[i] for i in idx]) + "\n"
    from fraud_costs import train  # importable once _split has run

    return int(train(http, model, body, PARAMS)["version"])


def walk(http: Any, model: str = "fraud-challenger") -> dict[str, Any]:
    """The walk-through; returns the figures it printed (JSON-able)."""
    text, train, held, rows = _split()
    champion = _train(http, model, text, train[:600])
    challenger = _train(http, model, text, train)
    http.put(
        f"/v1/models/{model}/aliases/production", json={"version": champion}
    ).raise_for_status()
    http.put(f"/v1/models/{model}/shadow", json={"version": challenger}).raise_for_status()
    held_rows = [rows[i] for i in held]
    records = [
        {k: (float(v) if v != "" else None) for k, v in r.items() if k != LABEL} for r in held_rows
    ]
    ids = [f"tx-{i}" for i in held]
    costs = [{"c_fp": C_FP, "c_fn": float(r["amount"])} for r in held_rows]
    r = http.post(
        f"/v1/models/{model}/predict",
        json={"records": records, "row_costs": costs, "ids": ids},
    )
    r.raise_for_status()
    outcomes = [{"id": i, "label": int(r[LABEL])} for i, r in zip(ids, held_rows, strict=True)]
    import time

    for _ in range(100):  # the log and the shadow write off the request path
        time.sleep(0.2)
        shadow = http.get(f"/v1/models/{model}/shadow").json()["counts"]
        if shadow["queued"] == 0 and shadow["written"] >= len(ids):
            break
    r = http.post(f"/v1/models/{model}/outcomes", json={"outcomes": outcomes})
    r.raise_for_status()
    compare = http.get(
        f"/v1/models/{model}/compare", params={"a": "production", "b": str(challenger)}
    )
    compare.raise_for_status()
    refused = http.post(
        f"/v1/models/{model}/aliases/production/promote",
        json={"candidate": challenger, "rule": {"min_labelled_pairs": 5000}},
    )
    promoted = http.post(
        f"/v1/models/{model}/aliases/production/promote",
        json={"candidate": challenger, "note": "cheaper on the held-out fifth"},
    )
    history = http.get(f"/v1/models/{model}/aliases/production/history").json()
    report = compare.json()
    return {
        "champion": champion,
        "challenger": challenger,
        "recorded_outcomes": r.json()["counts"],
        "compare": {
            k: report[k]
            for k in (
                "mode",
                "labelled_pairs",
                "cost_difference",
                "verdict",
                "disagreements",
                "versions",
            )
        },
        "refused": {
            "status": refused.status_code,
            "code": refused.json().get("code"),
            "detail": refused.json().get("detail"),
        },
        "promoted": {
            "status": promoted.status_code,
            "from": promoted.json().get("from_version"),
            "to": promoted.json().get("to_version"),
        },
        "history": [
            (m["reason"], m["from_version"], m["to_version"], m["actor"]) for m in history["moves"]
        ],
    }


def main() -> None:
    from fraud_costs import run_cli  # the same command line as the per-row cost example

    run_cli(__doc__, "fraud-challenger", 300, walk)


if __name__ == "__main__":
    main()
