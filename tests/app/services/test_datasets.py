"""Dataset references: roots, traversal, symlinks, formats, columns, http, partitions."""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.errors import Forbidden, InvalidArgument
from app.services.datasets import DatasetReader, DatasetRef, FetchPolicy


def _table(n: int = 100, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "a": rng.normal(size=n),
            "b": rng.integers(0, 5, size=n),
            "flag": rng.random(n) < 0.5,
            "y": (rng.random(n) < 0.3).astype(np.int64),
        }
    )


@pytest.fixture()
def root(root: Path) -> Path:
    """The data root, holding train.parquet and train.csv (the same table)."""
    pq.write_table(_table(), root / "train.parquet", row_group_size=30)
    _table().to_pandas().to_csv(root / "train.csv", index=False)
    return root


def _ref(uri: str, **kw: object) -> DatasetRef:
    return DatasetRef.from_mapping({"uri": uri, **kw})


def test_parquet_under_root_reads_in_batches(root: Path) -> None:
    reader = DatasetReader([str(root)])
    opened = reader.open(_ref(f"file://{root}/train.parquet", label_column="y"))
    assert opened.num_rows == 100
    assert opened.feature_columns == ["a", "b", "flag"]
    seen: list[int] = []
    blocks = list(opened.feature_blocks(batch_size=16, progress=seen.append))
    assert all(X.dtype == np.float32 and X.shape[0] <= 16 for X, _ in blocks)
    X = np.concatenate([b[0] for b in blocks])
    y = np.concatenate([b[1] for b in blocks])  # type: ignore[misc]
    t = _table()
    np.testing.assert_allclose(X[:, 0], t["a"].to_numpy().astype(np.float32))
    np.testing.assert_array_equal(y, t["y"].to_numpy())
    assert seen[-1] == 100 and seen == sorted(seen)


def test_csv_reads_like_parquet_and_format_is_inferred(root: Path) -> None:
    reader = DatasetReader([str(root)])
    ref = _ref(f"file://{root}/train.csv", label_column="y", columns=["a", "b"])
    assert ref.format == "csv"
    opened = reader.open(ref)
    assert opened.num_rows is None and opened.size_bytes and opened.size_bytes > 0
    X = np.concatenate([b[0] for b in opened.feature_blocks()])
    np.testing.assert_allclose(X[:, 1], _table()["b"].to_numpy())


def test_no_roots_refuses_every_file(root: Path) -> None:
    with pytest.raises(Forbidden, match="COSTWISE_DATA_ROOTS"):
        DatasetReader([]).open(_ref(f"file://{root}/train.parquet"))


@pytest.mark.parametrize(
    "uri",
    [
        "file:///etc/passwd.csv",
        "file://{root}/../train.parquet",
        "file://{root}/sub/../train.parquet",
        "file://otherhost{root}/train.parquet",
        "{root}/../x.csv",
    ],
)
def test_paths_outside_roots_are_403(root: Path, uri: str) -> None:
    with pytest.raises(Forbidden):
        DatasetReader([str(root)]).open(_ref(uri.format(root=root)))


def test_symlink_out_of_root_is_403_and_never_opened(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    pq.write_table(_table(), outside / "s.parquet")
    (root / "link.parquet").symlink_to(outside / "s.parquet")
    reader = DatasetReader([str(root)])
    with pytest.raises(Forbidden, match="not under an allowed data root"):
        reader.open(_ref(f"file://{root}/link.parquet"))
    # Inside a partitioned directory too.
    part = root / "parts"
    part.mkdir()
    pq.write_table(_table(), part / "p0.parquet")
    (part / "p1.parquet").symlink_to(outside / "s.parquet")
    with pytest.raises(Forbidden, match="symlink"):
        reader.open(_ref(f"file://{root}/parts", format="parquet"))
    # A symlink that stays inside the root is fine.
    (root / "inside.parquet").symlink_to(root / "train.parquet")
    assert reader.open(_ref(f"file://{root}/inside.parquet")).num_rows == 100


def test_missing_file_and_bad_format_are_422(root: Path) -> None:
    reader = DatasetReader([str(root)])
    with pytest.raises(InvalidArgument, match="no such file") as e:
        reader.open(_ref(f"file://{root}/nope.parquet"))
    assert e.value.field == "dataset.uri"
    (root / "fake.parquet").write_text("a,b\n1,2\n")
    with pytest.raises(InvalidArgument, match="not a readable parquet") as e:
        reader.open(_ref(f"file://{root}/fake.parquet"))
    assert e.value.field == "dataset.uri"
    with pytest.raises(InvalidArgument, match="format") as e:
        _ref(f"file://{root}/train.txt")
    assert e.value.field == "dataset.format"
    with pytest.raises(InvalidArgument, match="one of parquet, csv"):
        _ref(f"file://{root}/train.csv", format="xlsx")


def test_label_and_columns_are_checked(root: Path) -> None:
    reader = DatasetReader([str(root)])
    with pytest.raises(InvalidArgument, match="no column 'label'") as e:
        reader.open(_ref(f"file://{root}/train.parquet", label_column="label"))
    assert e.value.field == "dataset.label_column"
    with pytest.raises(InvalidArgument, match="no column 'zz'") as e:
        reader.open(_ref(f"file://{root}/train.parquet", columns=["a", "zz"]))
    assert e.value.field == "dataset.columns"
    with pytest.raises(InvalidArgument, match="label_column is required"):
        DatasetRef.from_mapping({"uri": "file:///x.csv"}, need_label=True)


def test_string_columns_are_refused_at_open_and_while_reading(root: Path) -> None:
    t = _table().append_column("name", pa.array([f"n{i}" for i in range(100)]))
    pq.write_table(t, root / "s.parquet")
    reader = DatasetReader([str(root)])
    with pytest.raises(InvalidArgument, match="'name' holds string, expected numbers"):
        reader.open(_ref(f"file://{root}/s.parquet", label_column="y"))
    # Strings as labels are fine.
    ok = reader.open(_ref(f"file://{root}/s.parquet", label_column="name", columns=["a"]))
    y = np.concatenate([b[1] for b in ok.feature_blocks()])  # type: ignore[misc]
    assert y[3] == "n3"
    # A CSV column that turns into text after the first (4 MiB) block fails while reading.
    lines = ["a,y"] + [f"{i},{i % 2}" for i in range(600_000)] + ["oops,1"]
    (root / "late.csv").write_text("\n".join(lines) + "\n")
    opened = reader.open(_ref(f"file://{root}/late.csv", label_column="y"))
    with pytest.raises(InvalidArgument, match="oops") as e:
        for _ in opened.feature_blocks():
            pass
    assert e.value.field == "dataset.uri"


def test_missing_label_names_the_row(root: Path) -> None:
    (root / "nolabel.csv").write_text("a,y\n1,0\n2,\n3,1\n")
    opened = DatasetReader([str(root)]).open(_ref(f"file://{root}/nolabel.csv", label_column="y"))
    with pytest.raises(InvalidArgument, match="row 1"):
        list(opened.feature_blocks())


def test_partitioned_parquet_directory(root: Path) -> None:
    base = root / "events"
    for day in ("2026-01-01", "2026-01-02"):
        d = base / f"day={day}"
        d.mkdir(parents=True)
        for k in range(2):
            pq.write_table(_table(50, seed=k), d / f"part-{k}.parquet")
    (base / "_SUCCESS").write_text("")
    reader = DatasetReader([str(root)])
    opened = reader.open(
        _ref(f"file://{root}/events", format="parquet", label_column="y", columns=["a", "b"])
    )
    assert opened.num_rows == 200 and len(opened.files) == 4
    assert "day" in opened.schema.names  # the partition key is a column (for ids)
    rows = sum(b.num_rows for b in opened.batches(columns=["a", "day"]))
    assert rows == 200
    # per file, the keys its folders add (what distributed training hands the workers)
    assert opened.partition_keys() == [
        {"day": f.split("day=")[1].split("/")[0]} for f in opened.files
    ]
    assert (
        sorted(k["day"] for k in opened.partition_keys()) == ["2026-01-01"] * 2 + ["2026-01-02"] * 2
    )
    # Without columns, the string partition key is not a feature: refused, named.
    with pytest.raises(InvalidArgument, match="'day'"):
        reader.open(_ref(f"file://{root}/events", format="parquet", label_column="y"))


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with single ``Range: bytes=a-b`` requests, as object stores serve."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[no-untyped-def]
        rng = self.headers.get("Range")
        path = self.translate_path(self.path)
        if not rng or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        start_s, _, end_s = rng.removeprefix("bytes=").partition("-")
        start = int(start_s) if start_s else max(0, size - int(end_s))
        end = min(int(end_s), size - 1) if end_s and start_s else size - 1
        f = open(path, "rb")  # noqa: SIM115 - closed by copyfile's caller
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self._remaining = end - start + 1
        return _Limited(f, end - start + 1)


class _Limited:
    def __init__(self, f, n: int) -> None:  # type: ignore[no-untyped-def]
        self._f, self._n = f, n

    def read(self, size: int = -1) -> bytes:
        size = self._n if size < 0 else min(size, self._n)
        data = self._f.read(size)
        self._n -= len(data)
        return data

    def close(self) -> None:
        self._f.close()


@pytest.fixture()
def http_root(root: Path) -> Iterator[str]:
    handler = functools.partial(_RangeHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_http_parquet_and_csv(http_root: str) -> None:
    # http needs no root, but the scheme and (a loopback address) the allow-list
    reader = DatasetReader([], ["http"], fetch=FetchPolicy(("127.0.0.1",)))
    for name in ("train.parquet", "train.csv"):
        opened = reader.open(_ref(f"{http_root}/{name}", label_column="y"))
        X = np.concatenate([b[0] for b in opened.feature_blocks(batch_size=40)])
        assert X.shape == (100, 3)
    with pytest.raises(InvalidArgument, match="no such file"):
        reader.open(_ref(f"{http_root}/missing.parquet"))


def test_unreachable_url_and_disallowed_scheme() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    reader = DatasetReader([], ["file", "http"], fetch=FetchPolicy(("127.0.0.1",), timeout=5))
    with pytest.raises(InvalidArgument, match="connection failed"):
        reader.open(_ref(f"http://127.0.0.1:{port}/x.parquet"))
    with pytest.raises(Forbidden, match="COSTWISE_DATA_PROTOCOLS"):
        DatasetReader([]).open(_ref(f"http://127.0.0.1:{port}/x.parquet"))  # the default
    with pytest.raises(Forbidden, match="ftp"):
        reader.open(_ref("ftp://example.invalid/x.csv"))


def test_reference_shape_errors_name_the_key() -> None:
    with pytest.raises(InvalidArgument) as e:
        DatasetRef.from_mapping({"uri": "file:///a.csv", "colums": ["a"]})
    assert e.value.field == "dataset.colums"
    with pytest.raises(InvalidArgument) as e:
        DatasetRef.from_mapping({"uri": "file:///a.csv", "columns": "a"})
    assert e.value.field == "dataset.columns"
    with pytest.raises(InvalidArgument) as e:
        DatasetRef.from_mapping({"uri": ""})
    assert e.value.field == "dataset.uri"
    ref = DatasetRef.from_mapping({"uri": "file:///a.csv", "label_column": "y"})
    assert DatasetRef.from_mapping(ref.to_mapping()) == ref


def test_settings_parse_roots_from_a_comma_list(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.settings import Settings

    monkeypatch.setenv("COSTWISE_DATA_ROOTS", "/srv/a, /srv/b")
    monkeypatch.setenv("COSTWISE_DATA_PROTOCOLS", '["file"]')
    s = Settings()
    assert s.data_roots == ["/srv/a", "/srv/b"] and s.data_protocols == ["file"]
    assert os.sep == "/"
