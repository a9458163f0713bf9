"""Every client method against the real service (SQLite, and PostgreSQL when set)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costwise import (
    Client,
    Forbidden,
    InvalidArgument,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
)
from costwise.types import AlgorithmParam, Alias, CreatedKey, Model, PredictResponse, Version
from tests.costwise.conftest import ADMIN_KEY, FAST_RETRY, FEATURES, Service

ROOT = Path(__file__).resolve().parents[2]
FRAUD_CSV = ROOT / "examples" / "fraud.csv"


def test_live_and_ready_report_ok(client: Client) -> None:
    assert client.live().status == "ok"
    ready = client.ready()
    assert ready.status == "ok" and ready.checks["database"] == "ok"


def test_train_from_arrays_returns_the_typed_version(client: Client, fraud: dict[str, Any]) -> None:
    v = fraud["version"]
    assert isinstance(v, Version)
    assert (v.model, v.version, v.status, v.algorithm) == ("fraud", 1, "ready", "adaboost")
    assert v.data["feature_names"] == FEATURES and v.data["n_rows"] == 300
    assert 0.0 <= v.metrics["auc"] <= 1.0 and v.created_at.tzinfo is not None


def test_models_and_versions_are_listed_and_read(client: Client, fraud: dict[str, Any]) -> None:
    page = client.list_models()
    assert page.total >= 1 and "fraud" in [m.name for m in page.models]
    model = client.get_model("fraud")
    assert isinstance(model, Model) and model.latest_version is not None
    versions = client.list_versions("fraud")
    assert versions[0].version == model.latest_version  # newest first
    assert client.get_version("fraud", 1) == fraud["version"]


def test_train_from_a_csv_path_and_from_csv_bytes(client: Client) -> None:
    from_path = client.train(
        "csvmodel", csv=FRAUD_CSV, label_column="fraud", n_estimators=10, mode="sync"
    )
    from_bytes = client.train(
        "csvmodel",
        csv=FRAUD_CSV.read_bytes(),
        label_column="fraud",
        description="uploaded as bytes",
        n_estimators=10,
    )
    assert isinstance(from_path, Version) and isinstance(from_bytes, Version)
    assert (from_path.version, from_bytes.version) == (1, 2)
    assert from_path.artifact_sha256 == from_bytes.artifact_sha256  # same data, same seed
    assert client.get_model("csvmodel").description == "uploaded as bytes"


def test_predict_threshold_follows_the_costs_of_the_request(
    client: Client, fraud: dict[str, Any]
) -> None:
    rows = fraud["X"][:5]
    cheap = client.predict("fraud", rows.tolist(), costs={"c_fp": 1, "c_fn": 1})
    dear = client.predict("fraud", rows, costs={"c_fp": 1, "c_fn": 9})  # numpy accepted
    assert isinstance(cheap, PredictResponse) and len(cheap.predictions) == 5
    assert cheap.predictions[0].threshold == pytest.approx(0.5)
    assert dear.predictions[0].threshold == pytest.approx(0.1)
    assert dear.cost_setting == "costs" and cheap.version == 1
    p = dear.predictions[0]
    assert p.probabilities is not None and p.expected_cost is not None
    assert p.decision == (1 if p.probabilities[1] >= p.threshold else 0)


def test_predict_explains_each_row_when_asked(client: Client, fraud: dict[str, Any]) -> None:
    rows = fraud["X"][:4]
    plain = client.predict("fraud", rows, costs={"c_fp": 1, "c_fn": 9})
    explained = client.predict("fraud", rows, costs={"c_fp": 1, "c_fn": 9}, explain=True)
    assert all(p.explanation is None for p in plain.predictions)
    for p in explained.predictions:
        e = p.explanation
        assert e is not None and list(e.contributions) == FEATURES
        assert e.bias + sum(e.contributions.values()) == pytest.approx(e.score, rel=1e-9)
        assert p.probabilities is not None and e.probability == p.probabilities[1]
    with pytest.raises(ValueError, match="explain and interval are for predict"):
        client.evaluate("fraud", fraud["y"][:4], rows, explain=True)


def test_predict_gives_intervals_when_asked(client: Client, fraud: dict[str, Any]) -> None:
    rows = fraud["X"][:6]
    client.train("folds", fraud["X"], fraud["y"], feature_names=FEATURES, mode="sync")  # auto
    plain = client.predict("folds", rows, costs={"c_fp": 1, "c_fn": 9})
    asked = client.predict("folds", rows, costs={"c_fp": 1, "c_fn": 9}, interval=True)
    assert plain.interval_method is None and all(p.interval is None for p in plain.predictions)
    assert asked.interval_method == "fold_jackknife"
    for p in asked.predictions:
        iv = p.interval
        assert iv is not None and p.probabilities is not None
        assert iv.p_low <= p.probabilities[1] <= iv.p_high
        same = (iv.p_low >= 0.1) == (iv.p_high >= 0.1)  # threshold c_fp / (c_fp + c_fn)
        assert iv.stable == same
    with pytest.raises(ValueError, match="explain and interval are for predict"):
        client.evaluate("fraud", fraud["y"][:4], rows, interval=True)


def test_predict_records_cost_matrix_row_costs_and_priors(
    client: Client, fraud: dict[str, Any]
) -> None:
    X = fraud["X"][:3]
    records = [dict(zip(FEATURES, row.tolist(), strict=True)) for row in X]
    by_matrix = client.predict("fraud", records=records, cost_matrix=[[0, 1], [9, 0]])
    by_rows = client.predict(
        "fraud",
        X,
        row_costs=[{"c_fp": 1, "c_fn": 9}, {"c_fp": 1, "c_fn": 1}, {"c_fp": 3, "c_fn": 1}],
    )
    shifted = client.predict("fraud", X, priors=[0.9, 0.1], version=1)
    assert by_matrix.cost_setting == "cost_matrix"
    assert by_matrix.predictions[0].threshold == pytest.approx(0.1)
    assert [p.threshold for p in by_rows.predictions] == pytest.approx([0.1, 0.5, 0.75])
    assert by_rows.cost_setting == "row_costs" and shifted.version == 1
    # provenance: what was applied, by which version and calibration
    assert by_matrix.applied_costs.cost_matrix == [[0, 1], [9, 0]]
    summary = by_rows.applied_costs.row_costs
    assert summary is not None and summary.n_rows == 3 and summary.max == [[0, 3], [9, 0]]
    assert shifted.applied_costs.priors == [0.9, 0.1]
    assert by_matrix.calibration.method == "platt" and by_matrix.decision_rule == "threshold"


def test_predict_among_actions_names_the_action_taken(
    client: Client, fraud: dict[str, Any]
) -> None:
    X = fraud["X"][:40]
    matrix = [[0.0, 4.0, 10.0], [100.0, 4.0, 0.0]]
    r = client.predict("fraud", X, actions=["approve", "review", "decline"], cost_matrix=matrix)
    assert r.applied_costs.actions == ["approve", "review", "decline"]
    for p in r.predictions:
        assert p.probabilities is not None and p.decision is None
        costs = [sum(q * matrix[i][a] for i, q in enumerate(p.probabilities)) for a in range(3)]
        assert p.action == ["approve", "review", "decline"][int(np.argmin(costs))]
    review = client.predict("fraud", X, costs={"c_fp": 1, "c_fn": 5, "c_review": 0.5})
    assert {p.action for p in review.predictions} <= {"negative", "positive", "review"}
    plain = client.predict("fraud", X, costs={"c_fp": 1, "c_fn": 5})
    assert all(p.action is None for p in plain.predictions)


def test_evaluate_reports_the_confusion_matrix_and_cost(
    client: Client, fraud: dict[str, Any]
) -> None:
    X, y = fraud["X"][:50], fraud["y"][:50]
    e = client.evaluate("fraud", y, X, costs={"c_fp": 1, "c_fn": 5})
    assert e.n_rows == 50 and np.asarray(e.confusion_matrix).sum() == 50
    assert e.total_cost == pytest.approx(e.mean_cost * 50)
    assert 0.0 <= e.accuracy <= 1.0


def test_alias_is_set_used_by_predict_and_deleted(client: Client, fraud: dict[str, Any]) -> None:
    assert client.set_alias("fraud", "staging", 1) == Alias("fraud", "staging", 1)
    answer = client.predict("fraud", fraud["X"][:1], alias="staging")
    assert (answer.alias, answer.version) == ("staging", 1)
    client.delete_alias("fraud", "staging")
    assert "staging" not in client.get_model("fraud").aliases
    with pytest.raises(NotFound) as err:
        client.predict("fraud", fraud["X"][:1], alias="staging")
    assert err.value.code == "NOT_FOUND"


def test_algorithms_are_listed_with_their_parameters(client: Client) -> None:
    algorithms = {a.name: a for a in client.list_algorithms()}
    assert "adaboost" in algorithms and algorithms["adaboost"].family == "binary"
    with_params = [a for a in algorithms.values() if a.params]
    assert with_params and all(isinstance(p, AlgorithmParam) for p in with_params[0].params)


def test_keys_are_created_listed_revoked_and_roles_enforced(
    server: Service, client: Client, fraud: dict[str, Any]
) -> None:
    created = client.create_key("scoring-team", "predictor")
    assert isinstance(created, CreatedKey) and created.key.startswith(created.prefix)
    assert created.id in [k.id for k in client.list_keys()]
    with Client(server.url, api_key=created.key, retry=FAST_RETRY) as predictor:
        assert predictor.predict("fraud", fraud["X"][:1]).version == 1
        with pytest.raises(Forbidden) as forbidden:
            predictor.set_alias("fraud", "production", 1)
        assert (forbidden.value.status, forbidden.value.code) == (403, "FORBIDDEN")
        client.revoke_key(created.id)
        with pytest.raises(Unauthorized) as revoked:
            predictor.list_models()
    assert revoked.value.status == 401
    assert not next(k for k in client.list_keys() if k.id == created.id).active


def test_missing_key_is_unauthorized(server: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COSTWISE_API_KEY", raising=False)
    with Client(server.url) as anonymous, pytest.raises(Unauthorized) as err:
        anonymous.list_models()
    assert err.value.code == "UNAUTHORIZED"


def test_url_and_key_come_from_the_environment(
    server: Service, monkeypatch: pytest.MonkeyPatch, fraud: dict[str, Any]
) -> None:
    monkeypatch.setenv("COSTWISE_URL", server.url + "/")
    monkeypatch.setenv("COSTWISE_API_KEY", ADMIN_KEY)
    with Client() as c:
        assert c.base_url == server.url
        assert c.get_model("fraud").name == "fraud"


def test_unknown_model_raises_not_found_with_code_and_detail(client: Client) -> None:
    with pytest.raises(NotFound) as err:
        client.get_model("no-such-model")
    e = err.value
    assert (e.status, e.code) == (404, "NOT_FOUND") and "no-such-model" in e.detail
    with pytest.raises(NotFound):
        client.get_version("no-such-model", 1)


def test_invalid_argument_names_the_field(client: Client, fraud: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgument) as bad_rounds:
        client.train("fraud", fraud["X"], fraud["y"], n_estimators=0)
    assert (bad_rounds.value.status, bad_rounds.value.field) == (422, "n_estimators")
    with pytest.raises(InvalidArgument) as bad_width:
        client.predict("fraud", [[1.0, 2.0]])
    assert bad_width.value.code == "INVALID_ARGUMENT" and bad_width.value.field
    with pytest.raises(InvalidArgument) as bad_cost:
        client.predict("fraud", fraud["X"][:1], costs={"c_fp": -1, "c_fn": 1})
    assert bad_cost.value.field == "costs" and "c_fp" in bad_cost.value.detail


def test_a_body_over_the_limit_is_payload_too_large(client: Client) -> None:
    rows = np.zeros((30_000, 4)) + 0.123456789  # ~2.5 MB > max_body_bytes
    with pytest.raises(PayloadTooLarge) as err:
        client.predict("fraud", rows)
    assert (err.value.status, err.value.code) == (413, "PAYLOAD_TOO_LARGE")


def test_the_client_package_imports_neither_the_service_nor_numpy() -> None:
    code = "import sys, json, costwise, costwise.client\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    heavy = ("app", "models", "numpy", "fastapi", "sqlalchemy", "pydantic", "starlette")
    loaded = set(__import__("json").loads(out.stdout))
    assert sorted(m for m in loaded for h in heavy if m == h or m.startswith(h + ".")) == []
