"""Champion and challenger through the client and the CLI, against the real server:
shadow set/show/clear, the promotion gate refusing (exit 1, the evidence on stdout) and
accepting, the alias's audit trail, and a reader refused."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pytest

from app.cli.main import main
from costwise import Client
from costwise.errors import Conflict, Forbidden, InvalidArgument
from tests.app.api.conftest import dataset
from tests.costwise.conftest import ADMIN_KEY, FEATURES, Service

X_ALL, Y_ALL = dataset(1600, seed=5)
N_TRAFFIC = 400


def _cli(server: Service, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--url", server.url, "--api-key", ADMIN_KEY])
    out, err = capsys.readouterr()
    return code, out, err


def _labelled_pairs(client: Client, n: int) -> dict[str, Any]:
    """The comparison of prod (a) with version 2 (b), once ``n`` labelled pairs are in
    (the shadow decides after the response, the log writes in batches)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            doc = client.compare("champ", "prod", 2)
        except InvalidArgument:  # no labelled rows yet
            if time.monotonic() > deadline:
                raise
        else:
            if doc["labelled_pairs"] >= n or time.monotonic() > deadline:
                return doc
        time.sleep(0.2)


def test_shadow_then_the_gate_refuses_then_promotes(
    client: Client, server: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    small = client.train("champ", X_ALL[:150], Y_ALL[:150], feature_names=FEATURES,
                         n_estimators=20, mode="sync")  # fmt: skip
    large = client.train("champ", X_ALL[:800], Y_ALL[:800], feature_names=FEATURES,
                         n_estimators=20, mode="sync")  # fmt: skip
    assert (small.version, large.version) == (1, 2)
    client.set_alias("champ", "prod", 1, note="first")

    code, out, _ = _cli(server, capsys, "shadow", "set", "champ", "2")
    assert code == 0 and json.loads(out)["resolved_version"] == 2, out
    code, out, _ = _cli(server, capsys, "shadow", "show", "champ")
    assert code == 0 and json.loads(out)["version"] == 2
    asked = client.predict("champ", X_ALL[1500:1503], alias="prod", shadow=True)
    assert asked.version == 1 and asked.shadow is not None and asked.shadow["version"] == 2
    assert len(asked.shadow["predictions"]) == 3
    assert client.predict("champ", X_ALL[1500:1501], alias="prod").shadow is None

    X, y = X_ALL[800 : 800 + N_TRAFFIC], Y_ALL[800 : 800 + N_TRAFFIC]
    ids = [f"t{i}" for i in range(N_TRAFFIC)]
    costs = [
        {"c_fp": 1.0, "c_fn": float(c)} for c in np.random.default_rng(0).uniform(1, 9, N_TRAFFIC)
    ]
    client.predict("champ", X, row_costs=costs, ids=ids, alias="prod")
    deadline = time.monotonic() + 30
    while (
        client.send_outcomes("champ", list(zip(ids, y.tolist(), strict=True))).counts.get(
            "pending", 0
        )
        and time.monotonic() < deadline
    ):
        time.sleep(0.2)
    doc = _labelled_pairs(client, N_TRAFFIC)
    assert doc["mode"] == "paired" and doc["labelled_pairs"] == N_TRAFFIC, doc
    hourly = client.compare("champ", "prod", 2, bucket="hour")
    assert hourly["bucket"] == "hour" and hourly["cost_difference"] == doc["cost_difference"]
    assert sum(e["b"]["labelled"] for e in hourly["series"]) == N_TRAFFIC
    code, out, _ = _cli(server, capsys, "compare", "champ", "--a", "prod", "--b", "2",
                        "--bucket", "hour")  # fmt: skip
    assert code == 0 and json.loads(out)["series"] == hourly["series"], out

    # more pairs than there are: refused, the evidence printed, nothing moved
    code, out, err = _cli(server, capsys, "promote", "champ", "prod", "--candidate", "2",
                          "--min-pairs", "100000", "--note", "too early")  # fmt: skip
    assert code == 1, (out, err)
    evidence = json.loads(out)
    assert evidence["comparison"]["labelled_pairs"] == N_TRAFFIC, evidence
    assert "refused [PROMOTION_REFUSED]" in err
    with pytest.raises(Conflict) as refused:
        client.promote("champ", "prod", 2, min_labelled_pairs=100000)
    assert refused.value.code == "PROMOTION_REFUSED" and refused.value.evidence == evidence
    assert client.get_model("champ").aliases["prod"] == 1

    # a reader cannot promote, whatever the evidence
    key = client.create_key("challenger-reader", "reader")
    with Client(server.url, api_key=key.key) as reader, pytest.raises(Forbidden):
        reader.promote("champ", "prod", 2, min_labelled_pairs=2, max_cost_difference=1e9)
    assert client.get_model("champ").aliases["prod"] == 1

    # a rule the evidence holds: the alias moves, the evidence is kept with the move
    code, out, err = _cli(server, capsys, "promote", "champ", "prod", "--candidate", "2",
                          "--min-pairs", "2", "--max-cost-difference", "1e9",
                          "--max-ece-increase", "1", "--note", "proven")  # fmt: skip
    assert code == 0, err
    moved = json.loads(out)
    assert (moved["from_version"], moved["to_version"]) == (1, 2)
    assert client.get_model("champ").aliases["prod"] == 2

    code, out, _ = _cli(server, capsys, "aliases", "history", "champ", "prod")
    moves = json.loads(out)
    assert [(m["from_version"], m["to_version"], m["reason"], m["note"]) for m in moves] == [
        (1, 2, "promoted", "proven"),
        (None, 1, "manual", "first"),
    ]
    assert moves[0]["evidence"]["comparison"]["labelled_pairs"] == N_TRAFFIC
    assert moves == client.alias_history("champ", "prod")

    code, _, err = _cli(server, capsys, "shadow", "clear", "champ")
    assert code == 0 and "stopped" in err
    code, out, _ = _cli(server, capsys, "shadow", "show", "champ")
    shown = json.loads(out)
    assert code == 0 and shown["version"] is None and shown["resolved_version"] is None, shown


def test_a_split_through_the_client_is_sticky(client: Client) -> None:
    for n in (100, 400):
        client.train("split", X_ALL[:n], Y_ALL[:n], feature_names=FEATURES, n_estimators=10,
                     mode="sync")  # fmt: skip
    client.set_alias("split", "production", 1)
    split = client.set_split("split", "production", 2, 0.5)
    assert (split["champion_version"], split["canary_version"]) == (1, 2)
    assert client.get_split("split", "production")["weight"] == 0.5
    arms = {}
    for key in ("k1", "k2", "k3", "k4", "k5", "k6"):
        answers = [client.predict("split", X_ALL[:1], routing_key=key) for _ in range(3)]
        assert len({a.version for a in answers}) == 1  # sticky
        arm = answers[0].arm
        assert (
            arm is not None
            and arm["sticky"]
            and arm["name"] == ("canary" if answers[0].version == 2 else "champion")
        )
        arms[key] = arm["name"]
    client.clear_split("split", "production")
    assert client.predict("split", X_ALL[:1], routing_key="k1").arm is None
