"""Registry repository tests; each one runs on SQLite and (when configured) PostgreSQL."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from typing import Any

import pytest
from sqlalchemy import Engine, delete, event, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_engine, make_session_factory
from app.errors import AlreadyExists, InvalidArgument, NotFound, Unavailable
from app.registry import Alias, Artifact, ModelVersion, RegisteredModel, Registry


def register(registry: Registry, model: RegisteredModel, blob: bytes = b"artifact") -> ModelVersion:
    """Add a version with small, valid metadata."""
    return registry.add_version(
        model,
        algorithm="adaboost",
        params={"n_estimators": 10},
        calibration={"method": "platt", "split": 0.25},
        data={"n_rows": 100, "n_features": 3, "classes": [0, 1]},
        metrics={"brier": 0.1},
        training_seconds=0.5,
        artifact=blob,
        artifact_sha256=hashlib.sha256(blob).hexdigest(),
    )


@contextmanager
def unit_of_work(factory: sessionmaker[Session]) -> Iterator[Registry]:
    """A registry on a session whose transaction commits at the end (rolls back on error)."""
    with factory.begin() as session:
        yield Registry(session)


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """Collect the SQL statements the engine runs inside the block."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_create_get_find_list_models(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        created = registry.create_model("fraud", description="card fraud", tags={"team": "risk"})
        registry.create_model("churn")
    with unit_of_work(session_factory) as registry:
        model = registry.get_model("fraud")
        assert (model.id, model.description, model.tags) == (
            created.id,
            "card fraud",
            {"team": "risk"},
        )
        assert (
            model.created_at.tzinfo is not None
            and model.created_at.utcoffset() == UTC.utcoffset(None)
        )
        assert registry.find_model("nope") is None
        assert [m.name for m in registry.list_models()] == ["churn", "fraud"]
        assert [m.name for m in registry.list_models(limit=1, offset=1)] == ["fraud"]
        assert registry.count_models() == 2
        with pytest.raises(NotFound, match="model 'nope' not found"):
            registry.get_model("nope")


def test_duplicate_model_name_is_already_exists(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        registry.create_model("fraud")
    with unit_of_work(session_factory) as registry:
        with pytest.raises(AlreadyExists, match="model 'fraud' already exists"):
            registry.create_model("fraud")
        assert registry.get_or_create_model("fraud").name == "fraud"
        assert registry.get_or_create_model("new", description="d").description == "d"
        assert registry.count_models() == 2  # the failed create left the transaction usable


@pytest.mark.parametrize("name", ["", "has space", "-lead", "x" * 129, "a/b"])
def test_invalid_names_are_rejected(session_factory: sessionmaker[Session], name: str) -> None:
    with unit_of_work(session_factory) as registry, pytest.raises(InvalidArgument):
        registry.create_model(name)


def test_versions_are_numbered_from_one(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        numbers = [register(registry, model, f"blob {i}".encode()).version for i in range(3)]
    assert numbers == [1, 2, 3]
    with unit_of_work(session_factory) as registry:
        assert [v.version for v in registry.list_versions("fraud")] == [1, 2, 3]
        assert [v.version for v in registry.list_versions("fraud", limit=1, offset=1)] == [2]
        assert registry.count_versions("fraud") == 3
        second = registry.get_version("fraud", 2)
        assert (second.algorithm, second.status, second.artifact_size) == ("adaboost", "ready", 6)
        assert second.params == {"n_estimators": 10} and second.data["classes"] == [0, 1]
        assert second.model.name == "fraud"
        assert registry.latest_version("fraud").version == 3
        assert registry.find_version("fraud", 9) is None
        with pytest.raises(NotFound, match=r"model 'fraud' has no version 7 \(latest is 3\)"):
            registry.get_version("fraud", 7)
        with pytest.raises(NotFound, match="model 'ghost' not found"):
            registry.get_version("ghost", 1)


def test_model_without_versions(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        registry.create_model("empty")
        assert registry.list_versions("empty") == []
        with pytest.raises(NotFound, match="model 'empty' has no versions yet"):
            registry.latest_version("empty")
        with pytest.raises(NotFound, match="model 'empty' has no versions yet"):
            registry.resolve("empty")
        with pytest.raises(NotFound, match="has no version 1 \\(it has no versions yet\\)"):
            registry.get_version("empty", 1)


def test_resolve_precedence(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        for _ in range(3):
            register(registry, model)
    with unit_of_work(session_factory) as registry:
        found, alias = registry.resolve("fraud")
        assert (found.version, alias) == (3, None)  # latest
        registry.set_alias("fraud", "production", 1)
        registry.set_alias("fraud", "staging", 2)
        assert [(v.version, a) for v, a in [registry.resolve("fraud")]] == [(1, "production")]
        found, alias = registry.resolve("fraud", alias="staging")
        assert (found.version, alias) == (2, "staging")
        found, alias = registry.resolve("fraud", version=3, alias="staging")
        assert (found.version, alias) == (3, None)  # explicit version wins
        with pytest.raises(
            NotFound, match=r"model 'fraud' has no alias 'canary' \(aliases: production, staging\)"
        ):
            registry.resolve("fraud", alias="canary")
        with pytest.raises(NotFound, match="model 'ghost' not found"):
            registry.resolve("ghost")


def test_resolve_ref_follows_the_same_rules_as_resolve(
    session_factory: sessionmaker[Session],
) -> None:
    """The predict hot path's one-statement resolution agrees with the ORM one."""
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        for _ in range(3):
            register(registry, model)
        other = registry.create_model("other")
        register(registry, other)
        registry.set_alias("other", "production", 1)

    def both(**kw: object) -> tuple[tuple[int, str, str | None], tuple[int, str, str | None]]:
        with unit_of_work(session_factory) as registry:
            v, alias = registry.resolve("fraud", **kw)  # type: ignore[arg-type]
            ref = registry.resolve_ref("fraud", **kw)  # type: ignore[arg-type]
            return (v.version, v.artifact_sha256, alias), (ref.version, ref.sha256, ref.alias)

    expected, got = both()
    assert expected == got and got[0] == 3  # latest; other model's alias is not ours
    with unit_of_work(session_factory) as registry:
        registry.set_alias("fraud", "production", 2)
        registry.set_alias("fraud", "staging", 1)
    for kw in ({}, {"alias": "staging"}, {"version": 3}, {"version": 1, "alias": "staging"}):
        expected, got = both(**kw)
        assert expected == got, kw
    assert both()[1][:1] == (2,) and both()[1][2] == "production"
    with unit_of_work(session_factory) as registry:
        with pytest.raises(NotFound, match="no version 9"):
            registry.resolve_ref("fraud", version=9)
        with pytest.raises(NotFound, match="no alias 'canary'"):
            registry.resolve_ref("fraud", alias="canary")
        with pytest.raises(NotFound, match="model 'ghost' not found"):
            registry.resolve_ref("ghost")


def test_aliases_set_move_delete_list(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        register(registry, model)
        register(registry, model)
        registry.set_alias("fraud", "production", 1)
        registry.set_alias("fraud", "staging", 1)
    with unit_of_work(session_factory) as registry:
        model = registry.get_model("fraud")
        assert registry.aliases_by_version(model) == {1: ["production", "staging"]}
        moved = registry.set_alias("fraud", "production", 2)  # move
        assert moved.model_version.version == 2
    with unit_of_work(session_factory) as registry:
        model = registry.get_model("fraud")
        assert registry.aliases_by_version(model) == {1: ["staging"], 2: ["production"]}
        assert [(a.name, a.model_version.version) for a in registry.list_aliases("fraud")] == [
            ("production", 2),
            ("staging", 1),
        ]
        registry.delete_alias("fraud", "staging")
        with pytest.raises(NotFound, match=r"no alias 'staging' \(aliases: production\)"):
            registry.delete_alias("fraud", "staging")
        with pytest.raises(NotFound, match="has no version 5"):
            registry.set_alias("fraud", "canary", 5)
        with pytest.raises(InvalidArgument, match="alias"):
            registry.set_alias("fraud", "bad alias", 1)
    with unit_of_work(session_factory) as registry:
        assert [a.name for a in registry.list_aliases("fraud")] == ["production"]


def test_listing_versions_does_not_load_artifacts(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        for _ in range(3):
            register(registry, model, b"\x00" * 10_000)
    with unit_of_work(session_factory) as registry, statements(engine) as seen:
        versions = registry.list_versions("fraud")
        _ = [(v.version, v.metrics, v.artifact_sha256, v.model.name) for v in versions]
        registry.latest_version("fraud")
        registry.resolve("fraud")
        registry.set_alias("fraud", "production", 1)
        registry.list_aliases("fraud")
    assert seen and not any("artifacts" in s for s in seen), seen


def test_artifact_round_trip(session_factory: sessionmaker[Session]) -> None:
    blob = bytes(range(256)) * 1000
    with unit_of_work(session_factory) as registry:
        version = register(registry, registry.create_model("fraud"), blob)
        assert version.artifact_sha256 == hashlib.sha256(blob).hexdigest()
    with unit_of_work(session_factory) as registry:
        version = registry.get_version("fraud", 1)
        assert version.artifact_size == len(blob)
        assert registry.get_artifact(version) == blob


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"metrics": {"auc": float("nan")}}, "metrics"),
        ({"params": {"rounds": float("inf")}}, "params"),
        ({"data": {"shape": {1, 2}}}, "data"),
        ({"algorithm": "x" * 65}, "algorithm"),
        ({"training_seconds": -1.0}, "training_seconds"),
        ({"training_seconds": float("nan")}, "training_seconds"),
        ({"artifact_sha256": "0" * 64}, "artifact_sha256"),
    ],
)
def test_invalid_version_metadata_is_rejected_before_the_database(
    session_factory: sessionmaker[Session], change: dict[str, Any], field: str
) -> None:
    fields: dict[str, Any] = {
        "algorithm": "adaboost",
        "params": {},
        "calibration": {},
        "data": {},
        "metrics": {},
        "training_seconds": 1.0,
        "artifact": b"blob",
        "artifact_sha256": hashlib.sha256(b"blob").hexdigest(),
    }
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        with pytest.raises(InvalidArgument) as caught:
            registry.add_version(model, **{**fields, **change})
        assert caught.value.field == field
        assert registry.list_versions("fraud") == []


def test_failed_unit_of_work_leaves_nothing(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        registry.create_model("fraud")
    with pytest.raises(RuntimeError), unit_of_work(session_factory) as registry:
        register(registry, registry.get_model("fraud"))
        raise RuntimeError("training interrupted after the version was flushed")
    with unit_of_work(session_factory) as registry:
        session = registry.session
        assert session.scalar(select(func.count()).select_from(ModelVersion)) == 0
        assert session.scalar(select(func.count()).select_from(Artifact)) == 0
        assert register(registry, registry.get_model("fraud")).version == 1  # no gap


def _register_concurrently(
    factory: sessionmaker[Session], name: str, n_threads: int, create: bool
) -> list[BaseException]:
    barrier = threading.Barrier(n_threads)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            with unit_of_work(factory) as registry:
                model = registry.get_or_create_model(name) if create else registry.get_model(name)
                register(registry, model, f"thread {i}".encode())
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


@pytest.mark.parametrize("create", [False, True], ids=["existing-model", "new-model"])
def test_concurrent_registrations_get_consecutive_versions(
    session_factory: sessionmaker[Session], create: bool
) -> None:
    n_threads = 16
    if not create:
        with unit_of_work(session_factory) as registry:
            registry.create_model("fraud")
    errors = _register_concurrently(session_factory, "fraud", n_threads, create)
    assert errors == []
    with unit_of_work(session_factory) as registry:
        versions = registry.list_versions("fraud")
        assert [v.version for v in versions] == list(range(1, n_threads + 1))
        blobs = {registry.get_artifact(v) for v in versions}
        assert blobs == {f"thread {i}".encode() for i in range(n_threads)}
        assert registry.count_models() == 1


def test_readonly_sessions_do_not_wait_for_writers(engine: Engine) -> None:
    writer = make_session_factory(engine)
    reader = make_session_factory(engine, readonly=True)
    with unit_of_work(writer) as registry:
        registry.create_model("fraud")
    with writer.begin() as session:
        Registry(session).create_model("uncommitted")  # holds the write lock on SQLite
        with reader() as read_session:
            assert [m.name for m in Registry(read_session).list_models()] == ["fraud"]


def test_deleting_a_model_cascades(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        register(registry, model)
        registry.set_alias("fraud", "production", 1)
    with session_factory.begin() as session:
        session.execute(delete(RegisteredModel).where(RegisteredModel.name == "fraud"))
    with session_factory() as session:
        for table in (ModelVersion, Artifact, Alias):
            assert session.scalar(select(func.count()).select_from(table)) == 0


def test_check_constraints_are_enforced(session_factory: sessionmaker[Session]) -> None:
    with unit_of_work(session_factory) as registry:
        model = registry.create_model("fraud")
        version = register(registry, model)
        version_id = version.id
    with pytest.raises(IntegrityError), session_factory.begin() as session:
        session.get_one(ModelVersion, version_id).status = "bogus"


@pytest.mark.parametrize(
    "url",
    ["postgresql://costwise:secret@127.0.0.1:1/registry", "sqlite:////nonexistent/dir/registry.db"],
    ids=["postgres-closed-port", "sqlite-bad-path"],
)
def test_unreachable_database_is_unavailable(url: str) -> None:
    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as session, pytest.raises(Unavailable) as caught:
            Registry(session).list_models()
    finally:
        engine.dispose()
    message = caught.value.detail
    assert caught.value.code == "UNAVAILABLE"
    assert "secret" not in message and "SELECT" not in message and "/nonexistent" not in message
