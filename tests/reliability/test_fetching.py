"""Issue 25, item 3: the service fetches URLs only when an operator enables it, and then
fenced: refused addresses are never connected to, errors never echo what was fetched, a
slow server is cut at the deadline, and the slot it held is free again.

No traffic leaves loopback. :func:`guard` replaces ``socket.socket.connect`` for the
whole test: every destination is recorded, and a non-loopback one raises instead of
connecting (so even a bug could not send a packet out; the tests then also check that
the refusal came from the address check, 403 "address refused", not from this guard).
Host names used here are answered by a patched ``socket.getaddrinfo`` (no DNS query).

The data servers are two ``http.server`` instances: one on 127.0.0.1, one on 127.0.0.2
(the "allow-listed" server of the redirect tests; Linux routes all of 127/8 to ``lo``).
"""

from __future__ import annotations

import contextlib
import http.server
import io
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.errors import Forbidden, InvalidArgument
from app.services.datasets.addresses import AddressPolicy
from app.services.datasets.fetching import Fetched, FetchPolicy, fetch_to_file
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body
from tests.app.batch.conftest import input_table, wait_job

MARKER = "zq7SECRETmarker41x"
FETCH_SECONDS = 1.5
TRICKLE_EVERY = 0.25


def _fetch_csv(url: str, policy: FetchPolicy, field: str = "dataset.uri") -> Fetched:
    """``fetch_to_file`` of a CSV over plain http, errors naming ``field``."""
    return fetch_to_file(url, policy, schemes={"http"}, field=field, suffix=".csv")


def _csv(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pacsv.write_csv(table, out)
    return out.getvalue()


def _train_csv() -> bytes:
    X, y = dataset(300)
    cols = {name: X[:, j] for j, name in enumerate("abcd")}
    return _csv(pa.table({**cols, "y": y}))


class DataServer:
    """A loopback HTTP server with a few fixed answers; ``paths`` lists what it was asked."""

    def __init__(self, host: str, routes: dict[str, Callable[[Any], None]]) -> None:
        self.paths: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server.paths.append(self.path)
                route = routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_error(404, f"nothing here {MARKER}")
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    route(self)  # (raises when the client hung up: the deadline)

        self.httpd = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _send(body: bytes, status: int = 200, **headers: str) -> Callable[[Any], None]:
    def route(h: Any) -> None:
        h.send_response(status)
        h.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            h.send_header(k.replace("_", "-"), v)
        h.end_headers()
        h.wfile.write(body)

    return route


def _redirect(location: str) -> Callable[[Any], None]:
    def route(h: Any) -> None:
        h.send_response(302)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()

    return route


def _trickle(h: Any) -> None:
    """A byte every TRICKLE_EVERY seconds of a 100,000-byte answer (never finishes in time)."""
    h.send_response(200)
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.wfile.write(b"a,b,y\n")
    for _ in range(400):
        h.wfile.write(b"1")
        h.wfile.flush()
        time.sleep(TRICKLE_EVERY)


def _cut(h: Any) -> None:
    """Promises 10,000 bytes, sends some (with the marker), then closes."""
    h.send_response(200)
    h.send_header("Content-Length", "10000")
    h.end_headers()
    h.wfile.write(f"a,b,y\n{MARKER},1,0\n".encode())
    h.wfile.flush()
    h.close_connection = True


def _second_trickles() -> Callable[[Any], None]:
    """The whole training CSV at the first request, trickling at every later one."""
    served = {"count": 0}
    train = _send(_train_csv())

    def route(h: Any) -> None:
        served["count"] += 1
        (train if served["count"] == 1 else _trickle)(h)

    return route


MARKER_FILES: dict[str, bytes] = {
    # a header name of a column that is not numbers
    "/marker-header.csv": f"{MARKER},b,y\nx{MARKER},1,0\ny,2,1\n".encode(),
    # a row with the wrong number of cells, holding the marker
    "/marker-ragged.csv": f"a,b,y\n1,2,0\n{MARKER},3\n".encode(),
    # not a Parquet file
    "/marker.parquet": MARKER.encode() * 50,
    # one class, the marker being its label
    "/marker-one-class.csv": f"a,b,y\n1,2,{MARKER}\n3,4,{MARKER}\n".encode(),
    # an infinite value in a column named with the marker
    "/marker-inf.csv": f"{MARKER},b,y\ninf,1,0\n2,2,1\n".encode(),
    # the label column is not there: the header holds the marker
    "/marker-nolabel.csv": f"{MARKER},b\n1,2\n".encode(),
}


@pytest.fixture
def guard(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every socket connection attempted, by address; a non-loopback one is refused."""
    attempts: list[tuple[str, int]] = []
    original = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple):
            host = str(address[0]).split("%")[0]
            attempts.append((host, int(address[1])))
            if not ipaddress.ip_address(host).is_loopback:
                raise OSError(f"test guard: no connection to {host} from this test")
        return original(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect)
    return attempts


@pytest.fixture
def servers() -> Iterator[tuple[DataServer, DataServer]]:
    routes: dict[str, Callable[[Any], None]] = {
        "/train.csv": _send(_train_csv()),
        "/batch.csv": _send(_csv(input_table(120))),
        "/trickle.csv": _trickle,
        "/cut.csv": _cut,
        "/status-500.csv": _send(f"oops {MARKER}".encode(), 500, X_Debug=MARKER),
        "/redirect-metadata": _redirect("http://169.254.169.254/latest/meta-data"),
        "/redirect-private": _redirect("http://10.0.0.1/x.csv"),
        "/redirect-file": _redirect("file:///etc/passwd"),
    }
    routes.update({path: _send(body) for path, body in MARKER_FILES.items()})
    routes["/loop.csv"] = _redirect("/loop.csv")
    routes["/once.csv"] = _second_trickles()
    routes["/job-second.csv"] = _second_trickles()
    local = DataServer("127.0.0.1", routes)
    other = DataServer("127.0.0.2", routes)  # the handlers look routes up at each request
    routes["/redirect-loopback"] = _redirect(f"{local.base}/train.csv")
    routes["/redirect-v6"] = _redirect(f"http://[::1]:{local.port}/train.csv")
    try:
        yield local, other
    finally:
        local.close()
        other.close()


def _settings(database_url: str, root: Path, **extra: Any) -> Settings:
    return Settings(
        database_url=database_url,
        max_train_rows=5000,
        max_rounds=200,
        max_sync_trainings=1,
        data_roots=[str(root)],
        data_fetch_timeout=5.0,
        data_fetch_seconds=FETCH_SECONDS,
        job_progress_interval=0.05,
        **extra,
    )


FETCHING_ON = {"data_protocols": ["file", "http", "https"]}


def _train(client: TestClient, uri: str, name: str = "m", **ref: Any) -> Any:
    fmt = "parquet" if uri.endswith(".parquet") else "csv"
    body = {"dataset": {"uri": uri, "label_column": "y", "format": fmt, **ref}}
    return client.post(f"/v1/models/{name}/versions?mode=sync", json=body)


def _batch(client: TestClient, uri: str, out: Path) -> Any:
    body = {
        "input": {"uri": uri, "format": "csv"},
        "output": {"uri": out.as_uri()},
        "costs": {"c_fn": {"column": "amount"}, "c_fp": 5},
        "id_columns": ["id"],
    }
    return client.post("/v1/models/fraud/batch", json=body)


def _trained(client: TestClient) -> None:
    r = client.post("/v1/models/fraud/versions?mode=sync", json=train_body(300))
    assert r.status_code == 201, r.text


def _refused_urls(local: DataServer, other: DataServer) -> list[str]:
    return [
        f"{local.base}/train.csv",
        f"http://[::1]:{local.port}/train.csv",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/x.csv",
        f"{other.base}/redirect-loopback",
        f"{other.base}/redirect-v6",
        f"{other.base}/redirect-metadata",
        f"{other.base}/redirect-private",
    ]


def test_fetching_is_off_by_default_and_nothing_is_contacted(
    database_url: str, root: Path, servers: Any, guard: list[tuple[str, int]]
) -> None:
    local, other = servers
    assert Settings().data_protocols == ["file"]
    with TestClient(create_app(_settings(database_url, root)), raise_server_exceptions=False) as c:
        _trained(c)
        for uri in _refused_urls(local, other):
            for r in (_train(c, uri), _batch(c, uri, root / "out")):
                assert r.status_code == 403, r.text
                body = r.json()
                assert body["code"] == "FORBIDDEN"
                assert body["field"] in ("dataset.uri", "input.uri")
                assert "COSTWISE_DATA_PROTOCOLS" in body["detail"], body
    assert guard == [] and local.paths == [] and other.paths == []


def test_with_fetching_on_refused_addresses_are_never_connected_to(
    database_url: str, root: Path, servers: Any, guard: list[tuple[str, int]]
) -> None:
    """Loopback (v4, v6), link-local, private, and redirects from an allow-listed server to
    each of them: 403 "address refused" for training and batch; the only connection ever
    attempted is to the allow-listed server (127.0.0.2), which answered the redirects."""
    local, other = servers
    settings = _settings(database_url, root, data_allow_hosts=["127.0.0.2"], **FETCHING_ON)
    redirected = "a redirect led to an address that is not allowed"
    wanted = [
        "loopback (127.0.0.1)",
        "loopback (::1)",
        "link-local (169.254.169.254)",
        "private (10.0.0.1)",
        f"{redirected} (loopback)",
        f"{redirected} (loopback)",
        f"{redirected} (link-local)",
        f"{redirected} (private)",
    ]
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        _trained(c)
        for uri, want in zip(_refused_urls(local, other), wanted, strict=True):
            for r in (_train(c, uri), _batch(c, uri, root / "out")):
                assert r.status_code == 403, (uri, r.text)
                detail = r.json()["detail"]
                assert "address refused: " + want in detail, (uri, detail)
                assert "COSTWISE_DATA_ALLOW_HOSTS" in detail
        r = _train(c, f"{other.base}/redirect-file")
        assert r.status_code == 403 and "scheme is not allowed" in r.json()["detail"], r.text
    assert local.paths == []  # the redirects to 127.0.0.1 were refused before connecting
    assert {host for host, _ in guard} == {"127.0.0.2"}, guard
    assert all(port == other.port for _, port in guard)


def test_with_127_0_0_1_allowed_a_csv_trains_and_a_batch_runs(
    database_url: str, root: Path, servers: Any, guard: list[tuple[str, int]]
) -> None:
    local, _ = servers
    settings = _settings(database_url, root, data_allow_hosts=["127.0.0.1"], **FETCHING_ON)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = _train(c, f"{local.base}/train.csv", name="remote")
        assert r.status_code == 201, r.text
        v = r.json()
        assert v["data"]["n_rows"] == 300 and v["data"]["feature_names"] == list("abcd")
        assert v["data"]["dataset"]["uri"] == f"{local.base}/train.csv"
        # the allow-list names 127.0.0.1, not ::1 nor the rest of 127/8
        r = _train(c, f"http://[::1]:{local.port}/train.csv")
        assert r.status_code == 403 and "loopback (::1)" in r.json()["detail"], r.text
        _trained(c)
        r = _batch(c, f"{local.base}/batch.csv", root / "out")
        assert r.status_code == 202, r.text
        job = wait_job(c, r.json()["id"])
        assert job["status"] == "succeeded", job
        assert job["result"]["rows"] == 120
    assert {host for host, _ in guard} == {"127.0.0.1"}


def test_no_error_echoes_fetched_content(
    database_url: str, root: Path, servers: Any, guard: list[tuple[str, int]]
) -> None:
    """Files, headers and bodies holding a marker: every training and batch error is a
    4xx that says what was wrong, and none contains the marker."""
    local, _ = servers
    settings = _settings(database_url, root, data_allow_hosts=["127.0.0.1"], **FETCHING_ON)
    expected = {
        "/marker-header.csv": (422, "holds string, expected numbers"),
        "/marker-ragged.csv": (422, "not a well-formed CSV file"),
        "/marker.parquet": (422, "not a Parquet file"),
        "/marker-one-class.csv": (422, "at least two classes are needed, got 1"),
        "/marker-inf.csv": (422, "holds an infinite value in row 0"),
        "/marker-nolabel.csv": (422, "no column 'y' in the data set (2 columns)"),
        "/status-500.csv": (422, "the server answered HTTP 500"),
        "/missing.csv": (422, "the server answered HTTP 404 (no such file)"),
        "/cut.csv": (422, "the response was cut off"),
    }
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        _trained(c)
        for path, (status, text) in expected.items():
            r = _train(c, f"{local.base}{path}")
            assert r.status_code == status, (path, r.text)
            assert text in r.json()["detail"], (path, r.text)
            assert MARKER not in r.text, (path, r.text)
            assert MARKER.lower() not in r.text.lower()
            b = _batch(c, f"{local.base}{path}", root / "out")
            assert 400 <= b.status_code < 500, (path, b.text)
            assert MARKER.lower() not in b.text.lower(), (path, b.text)
        # the caller's own column names are still named; the file's are not listed
        r = _train(c, f"{local.base}/marker-header.csv", columns=["b"], label_column="nope")
        assert r.status_code == 422 and "'nope'" in r.text and MARKER not in r.text, r.text


def test_a_trickling_server_is_cut_at_the_deadline_and_the_slot_is_freed(
    database_url: str, root: Path, servers: Any, guard: list[tuple[str, int]]
) -> None:
    """A byte every 0.25 s never trips the read timeout (5 s); the whole-fetch deadline
    (1.5 s) cuts it. Training: 422 at once, and the one training slot is free; a
    synchronous training fetches once, before taking its slot; a training job that
    fetches again in its worker fails at the deadline and the next job runs. Batch: 422."""
    local, _ = servers
    settings = _settings(database_url, root, data_allow_hosts=["127.0.0.1"], **FETCHING_ON)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        started = time.monotonic()
        r = _train(c, f"{local.base}/trickle.csv")
        took = time.monotonic() - started
        assert r.status_code == 422, r.text
        assert f"timed out after {FETCH_SECONDS:g} s" in r.json()["detail"], r.text
        assert "COSTWISE_DATA_FETCH_SECONDS" in r.json()["detail"]
        assert took < FETCH_SECONDS + 5, took  # the deadline, not the 100 s trickle
        # max_sync_trainings=1: the slot is free
        assert _train(c, f"{local.base}/train.csv", name="after").status_code == 201
        # fetched once (a second fetch would trickle): trained
        assert _train(c, f"{local.base}/once.csv", name="once").status_code == 201
        assert local.paths.count("/once.csv") == 1
        # a job fetches again in its worker: cut there, the job fails, the next one runs
        body = {"dataset": {"uri": f"{local.base}/job-second.csv", "label_column": "y"}}
        r = c.post("/v1/models/job/versions?mode=job", json=body)
        assert r.status_code == 202, r.text
        job = wait_job(c, r.json()["id"])
        assert job["status"] == "failed", job
        assert f"timed out after {FETCH_SECONDS:g} s" in job["error"]["detail"], job
        body = {"dataset": {"uri": f"{local.base}/train.csv", "label_column": "y"}}
        r = c.post("/v1/models/job/versions?mode=job", json=body)
        assert wait_job(c, r.json()["id"])["status"] == "succeeded"
        _trained(c)
        started = time.monotonic()
        r = _batch(c, f"{local.base}/trickle.csv", root / "out")
        assert r.status_code == 422 and "timed out" in r.json()["detail"], r.text
        assert time.monotonic() - started < FETCH_SECONDS + 5


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.1.2.3", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "not a public address"),
        ("::ffff:127.0.0.1", "loopback, in IPv6 form,"),
        ("::ffff:169.254.169.254", "link-local, in IPv6 form,"),
        ("2002:a00:1::", "private, in IPv6 form,"),  # 6to4 of 10.0.0.1
        ("64:ff9b::a9fe:a9fe", "link-local, in IPv6 form,"),  # NAT64 of 169.254.169.254
        ("93.184.216.34", None),
        ("2606:2800:220:1:248:1893:25c8:1946", None),
    ],
)
def test_address_classification(address: str, reason: str | None) -> None:
    """Classification only: nothing is connected to."""
    policy = AddressPolicy()
    assert policy.refusal("example.test", ipaddress.ip_address(address)) == reason
    allowed = AddressPolicy.from_entries([f"{address}/128" if ":" in address else address])
    assert allowed.refusal("example.test", ipaddress.ip_address(address)) is None


def test_allow_list_names_and_own_address() -> None:
    policy = AddressPolicy.from_entries(["Data.Example.", "10.1.0.0/16"], own_hosts=["203.0.113.9"])
    ip = ipaddress.ip_address
    assert policy.refusal("data.example", ip("10.9.9.9")) is None  # the host name is named
    assert policy.refusal("other.example", ip("10.1.2.3")) is None  # in the network
    assert policy.refusal("other.example", ip("10.2.0.1")) == "private"
    # the service's own listening address (COSTWISE_HOST), public or not
    own = AddressPolicy(own_hosts=("93.184.216.34",))
    assert own.refusal("x.example", ip("93.184.216.34")) == "an address of this machine"
    with pytest.raises(ValueError):
        AddressPolicy.from_entries(["10.0.0.0/99"])
    for bad in ("10.0.0.0/99", "data.internal:8080", "http://data.internal"):
        with pytest.raises(ValueError, match="neither a network"):
            Settings(data_allow_hosts=bad)
    ok = Settings(data_allow_hosts="data.internal, 10.0.0.0/8,[::1],fd00::/8")
    assert ok.data_allow_hosts == ["data.internal", "10.0.0.0/8", "[::1]", "fd00::/8"]


def _answers(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[list[str]]]) -> list[str]:
    """Patch getaddrinfo: ``table[name]`` holds the answers to successive look-ups (the
    last one repeats); other names fail. Returns the names looked up."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        try:
            ipaddress.ip_address(name)
            return real(host, port, *args, **kwargs)  # a literal: no DNS query
        except ValueError:
            pass
        asked.append(name)
        if name not in table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown in this test")
        answers = table[name]
        addrs = answers.pop(0) if len(answers) > 1 else answers[0]
        out = []
        for a in addrs:
            family = socket.AF_INET6 if ":" in a else socket.AF_INET
            sockaddr = (a, int(port), 0, 0) if family == socket.AF_INET6 else (a, int(port))
            out.append((family, socket.SOCK_STREAM, 6, "", sockaddr))
        return out

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_names_are_resolved_once_and_the_checked_address_is_used(
    monkeypatch: pytest.MonkeyPatch, servers: Any, guard: list[tuple[str, int]]
) -> None:
    """DNS rebinding: a name that answers 127.0.0.1 (allowed) and 10.0.0.1 afterwards is
    looked up once per connection and connected to at the address checked; a name with
    one refused address among public ones is refused without connecting."""
    local, _ = servers
    asked = _answers(
        monkeypatch,
        {
            "data.test": [["127.0.0.1"], ["10.0.0.1"]],
            "mixed.test": [["93.184.216.34", "169.254.169.254"]],
            "metadata.test": [["169.254.169.254"]],
        },
    )
    policy = FetchPolicy(("127.0.0.1/32",), timeout=5, total_seconds=10)
    fetched = _fetch_csv(f"http://data.test:{local.port}/train.csv", policy)
    assert Path(fetched.path).read_bytes() == _train_csv()
    fetched.remove()
    assert not Path(fetched.path).exists()
    assert asked == ["data.test"] and guard == [("127.0.0.1", local.port)]
    for name, reason in (("mixed.test", "link-local"), ("metadata.test", "link-local")):
        with pytest.raises(Forbidden, match=f"address refused: {reason}"):
            _fetch_csv(f"http://{name}/latest/meta-data", policy)
    with pytest.raises(InvalidArgument, match="does not resolve"):
        _fetch_csv("http://nowhere.test/x.csv", policy, field="f")
    assert guard == [("127.0.0.1", local.port)]  # nothing else was connected to


def test_a_closed_and_an_open_port_answer_alike() -> None:
    """Refused addresses: the same answer whatever listens there (nothing is sent).
    Allowed ones: a closed port is "connection failed", never the socket's error text."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    try:
        details = []
        for port in (listening.getsockname()[1], closed_port):
            with pytest.raises(Forbidden) as e:
                _fetch_csv(f"http://127.0.0.1:{port}/x.csv", FetchPolicy(), field="f")
            details.append(e.value.detail)
        assert details[0] == details[1]
        with pytest.raises(InvalidArgument) as e:
            _fetch_csv(
                f"http://127.0.0.1:{closed_port}/x.csv", FetchPolicy(("127.0.0.1",)), field="f"
            )
        assert e.value.detail.endswith("connection failed")
    finally:
        listening.close()


@pytest.mark.parametrize(
    "host",
    ["2130706433", "0x7f.1", "127.1", "017700000001", "localhost", "[::ffff:127.0.0.1]", "[::]"],
)
def test_other_spellings_of_loopback_are_refused_without_connecting(
    host: str, guard: list[tuple[str, int]]
) -> None:
    """Decimal, hexadecimal, short and octal forms, names and IPv6 forms: the address the
    name resolves to is what is checked (parsed locally, no DNS query)."""
    with pytest.raises(Forbidden, match="address refused: (loopback|unspecified)"):
        _fetch_csv(f"http://{host}:9/x.csv", FetchPolicy(("10.0.0.0/8",)))
    assert guard == []


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for DNS name ``name`` and its key (PEM files)."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_https_checks_the_certificate_of_the_name_while_connecting_to_the_pinned_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guard: list[tuple[str, int]]
) -> None:
    """Pinning connects to the checked address, yet TLS verifies the certificate against
    the host name of the URL (SNI): a certificate for ``data.test`` is accepted for
    ``https://data.test``, one for another name is refused ("connection failed")."""
    import ssl

    import httpcore._sync.connection as connection

    body = _train_csv()
    results = {}
    for cert_name in ("data.test", "other.test"):
        cert, key = _self_signed(tmp_path, cert_name)
        server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_ctx.load_cert_chain(cert, key)
        server = DataServer("127.0.0.1", {"/train.csv": _send(body)})
        server.httpd.socket = server_ctx.wrap_socket(server.httpd.socket, server_side=True)
        client_ctx = ssl.create_default_context(cafile=str(cert))
        monkeypatch.setattr(connection, "default_ssl_context", lambda ctx=client_ctx: ctx)
        _answers(monkeypatch, {"data.test": [["127.0.0.1"]]})
        try:
            fetched = fetch_to_file(
                f"https://data.test:{server.port}/train.csv",
                FetchPolicy(("127.0.0.1",), timeout=5, total_seconds=10),
                schemes={"https"},
                field="dataset.uri",
                suffix=".csv",
            )
            results[cert_name] = Path(fetched.path).read_bytes() == body
        except InvalidArgument as exc:
            results[cert_name] = exc.detail
        finally:
            server.close()
    assert results["data.test"] is True
    assert str(results["other.test"]).endswith("connection failed"), results
    assert {host for host, _ in guard} == {"127.0.0.1"}


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1:99999/x.csv",
        "http://[::1/x.csv",
        "http://127.0.0.1:abc/x.csv",
        "http:///x.csv",
        "http://127.0.0.1:0/x.csv",
        "http://a b/x.csv",
        "http://127.0.0.1:9/x.csv\r\nHost: evil",
    ],
)
def test_malformed_urls_are_a_422_naming_the_field(
    database_url: str, root: Path, uri: str, guard: list[tuple[str, int]]
) -> None:
    settings = _settings(database_url, root, data_allow_hosts=["127.0.0.1"], **FETCHING_ON)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = _train(c, uri)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "dataset.uri" and "not a valid UR" in r.json()["detail"]
    assert guard == []


def test_size_and_redirect_bounds(
    database_url: str, root: Path, servers: Any, guard: list[tuple[str, int]]
) -> None:
    """A file over COSTWISE_DATA_FETCH_MAX_BYTES is 413 naming the limit; a redirect loop
    stops after 5 hops (6 requests) with 422."""
    local, _ = servers
    settings = _settings(
        database_url,
        root,
        data_allow_hosts=["127.0.0.1"],
        data_fetch_max_bytes=4096,
        **FETCHING_ON,
    )
    assert len(_train_csv()) > 4096
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = _train(c, f"{local.base}/train.csv")
        assert r.status_code == 413, r.text
        body = r.json()
        assert body["limit"] == 4096 and "COSTWISE_DATA_FETCH_MAX_BYTES" in body["detail"]
        r = _train(c, f"{local.base}/loop.csv")
        assert r.status_code == 422 and "more than 5 redirects" in r.json()["detail"], r.text
    assert local.paths.count("/loop.csv") == 6
