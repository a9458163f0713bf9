"""A real third-party Open Inference Protocol client against a real server.

NVIDIA's ``tritonclient[http]`` (``InferenceServerClient``) talks to costwise served by
uvicorn on a free port: liveness, readiness, model metadata and inference with costs in
the request ``parameters`` and as a ``costs`` input tensor, JSON (non-binary) tensors.
Answers are compared with /v1 predict. Skipped when tritonclient is not installed.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
import uvicorn

from app.api.main import create_app
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body

triton = pytest.importorskip("tritonclient.http")
triton_utils = pytest.importorskip("tritonclient.utils")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(database_url: str) -> Iterator[str]:
    """costwise on uvicorn in a thread, with model 'fraud' trained; yields host:port."""
    port = _free_port()
    config = uvicorn.Config(
        create_app(Settings(database_url=database_url)), port=port, log_level="warning"
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started:
        assert time.time() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    r = httpx.post(f"http://127.0.0.1:{port}/v1/models/fraud/versions", json=train_body())
    assert r.status_code == 201, r.text
    try:
        yield f"127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)


def _input(name: str, array: np.ndarray, datatype: str) -> object:
    t = triton.InferInput(name, list(array.shape), datatype)
    t.set_data_from_numpy(array, binary_data=False)
    return t


def test_tritonclient_talks_to_costwise(server: str) -> None:
    client = triton.InferenceServerClient(url=server)
    assert client.is_server_live() and client.is_server_ready()
    assert client.is_model_ready("fraud") and client.is_model_ready("fraud", "1")
    meta = client.get_model_metadata("fraud")
    assert meta["inputs"] == [{"name": "features", "datatype": "FP64", "shape": [-1, 4]}]
    assert client.get_server_metadata()["name"] == "costwise"

    X = dataset(8)[0][:3]
    wanted = [triton.InferRequestedOutput(n, binary_data=False)
              for n in ("probabilities", "decision", "threshold")]  # fmt: skip
    result = client.infer(
        "fraud",
        [_input("features", X, "FP64")],
        outputs=wanted,
        parameters={"c_fp": 1, "c_fn": 5},
        request_id="7",
    )
    ref = httpx.post(
        f"http://{server}/v1/models/fraud/predict",
        json={"instances": X.tolist(), "costs": {"c_fp": 1, "c_fn": 5}},
    ).json()
    proba = result.as_numpy("probabilities")
    assert proba.shape == (3, 2)
    assert np.allclose(proba, [p["probabilities"] for p in ref["predictions"]])
    assert result.as_numpy("decision").tolist() == [p["decision"] for p in ref["predictions"]]
    assert np.allclose(result.as_numpy("threshold"), 1 / 6)
    response = result.get_response()
    assert response["id"] == "7" and response["model_version"] == "1"
    assert response["parameters"]["cost_matrix"] == [[0.0, 1.0], [5.0, 0.0]]

    # per-row costs as a second tensor, FP32 features, a named version
    costs = np.array([[1, 2], [1, 420], [3, 1]], dtype=np.float64)
    result = client.infer(
        "fraud",
        [_input("features", X.astype(np.float32), "FP32"), _input("costs", costs, "FP64")],
        model_version="1",
    )
    rows = [{"c_fp": a, "c_fn": b} for a, b in costs.tolist()]
    ref = httpx.post(
        f"http://{server}/v1/models/fraud/predict",
        json={"instances": X.astype(np.float32).astype(np.float64).tolist(), "row_costs": rows},
    ).json()
    assert result.as_numpy("decision").tolist() == [p["decision"] for p in ref["predictions"]]
    assert np.allclose(result.as_numpy("threshold"), [p["threshold"] for p in ref["predictions"]])

    with pytest.raises(triton_utils.InferenceServerException) as err:
        client.infer("fraud", [_input("features", X[:, :3].copy(), "FP64")])
    assert "expected 4 features per row (shape [N, 4]), got shape [3, 3]" in str(err.value)
    with pytest.raises(triton_utils.InferenceServerException) as err:
        client.get_model_metadata("nope")
    assert "model 'nope' not found" in str(err.value)
    client.close()
