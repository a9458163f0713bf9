"""The bundled example: examples/fraud.csv is what examples/make_fraud.py writes, it has
real signal, and per-row costs (a miss costs the transaction's amount) lose less money
on held-out rows than one fixed threshold, measured through the API as in the README."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_example_is_what_the_generator_writes(tmp_path: Path) -> None:
    make_fraud = _load("make_fraud")
    out = tmp_path / "fraud.csv"
    make_fraud.write(out, make_fraud.generate())
    committed = (EXAMPLES / "fraud.csv").read_bytes()
    assert out.read_bytes() == committed
    assert len(committed) < 1_000_000
    header = committed.decode().splitlines()[0].split(",")
    assert "amount" in header and header[-1] == "fraud"


def test_per_row_costs_beat_one_fixed_threshold_in_money(tmp_path: Path) -> None:
    fraud_costs = _load("fraud_costs")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    settings = Settings(database_url=url, auto_migrate=True)
    with TestClient(create_app(settings)) as http:
        figures = fraud_costs.measure(http)
        # a second run reuses the version (found by its data alias): nothing registered
        again = fraud_costs.measure(http)
        assert http.get("/v1/models/fraud-example").json()["latest_version"] == 1
    assert again == figures
    results = figures["results"]
    assert figures["held_out_rows"] == 1200 and figures["held_out_frauds"] > 0
    assert figures["evaluation_metrics"]["auc"] > 0.75  # real signal (the old file: ~0.58)
    per_row, fixed = results["per-row"]["money"], results["fixed"]["money"]
    assert per_row < fixed < results["0-1"]["money"] <= results["flag nothing"]["money"]
    for r in results.values():  # every held-out fraud is either caught or missed
        assert r["frauds_caught"] + r["frauds_missed"] == figures["held_out_frauds"]


def test_review_costs_prices_both_decisions_and_monitoring_agrees(tmp_path: Path) -> None:
    """examples/review_costs.py on the bundled fraud.csv (the shared data sets are not
    needed): both decisions priced by an independent loop over the held-out rows, and
    the monitoring's realised cost per action equal to the money of each action."""
    review_costs = _load("review_costs")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    settings = Settings(database_url=url, auto_migrate=True)
    data = EXAMPLES / "fraud.csv"
    with TestClient(create_app(settings)) as http:
        figures = review_costs.measure(
            http, "fraud-review", data, "fraud", "amount", review=2.0, share=0.1
        )
        again = review_costs.measure(
            http, "fraud-review", data, "fraud", "amount", review=2.0, share=0.1
        )
        assert http.get("/v1/models/fraud-review").json()["latest_version"] == 1
    assert again == figures
    two, review = figures["results"]["two actions"], figures["results"]["with review"]
    assert figures["held_out_rows"] == 1800 and two["reviewed"] == 0
    assert 0 < review["reviewed"] < 1800
    assert two["approved"] + two["declined"] == 1800
    assert sum(review[k] for k in ("approved", "declined", "reviewed")) == 1800
    for r in (two, review):
        assert r["money"] == pytest.approx(sum(r["money_by_action"].values()), abs=0.02)
    assert review["money_by_action"]["review"] == pytest.approx(2.0 * review["reviewed"])
    monitored = figures["monitoring_actions"]
    for action, money in review["money_by_action"].items():
        assert monitored.get(action, 0.0) == pytest.approx(money, abs=0.02), action
    assert review["money"] < two["money"]  # a 2 EUR review pays on these rows
