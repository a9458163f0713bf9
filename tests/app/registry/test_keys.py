"""API keys in the registry: only a hash is stored; create, list, revoke, look up."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session, sessionmaker

from app.errors import Conflict, InvalidArgument, NotFound
from app.registry.keys import ApiKeys, generate_key, hash_key
from app.registry.orm import ApiKey
from app.registry.repository import Registry
from app.services.access.keys import create_key, list_keys, revoke_key


def test_generated_keys_are_long_random_and_prefixed() -> None:
    keys = {generate_key() for _ in range(100)}
    assert len(keys) == 100
    assert all(k.startswith("cw_") and len(k) == 46 for k in keys)
    assert hash_key("abc") == hashlib.sha256(b"abc").hexdigest()


def test_plaintext_is_never_stored(engine: Engine, session_factory: sessionmaker[Session]) -> None:
    view, plaintext = create_key(session_factory, "ops", "admin")
    with engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(text("SELECT * FROM api_keys"))]
    assert len(rows) == 1
    stored = " ".join(str(v) for v in rows[0])
    assert plaintext not in stored and plaintext[8:] not in stored
    assert hash_key(plaintext) in stored
    assert view.prefix == plaintext[:8] and view.role == "admin" and view.active


def test_find_by_hash_and_revoke(session_factory: sessionmaker[Session]) -> None:
    admin, _ = create_key(session_factory, "ops", "admin")
    reader, plaintext = create_key(session_factory, "dash board", "reader")
    with session_factory.begin() as session:
        keys = ApiKeys(session)
        row = keys.find_by_hash(hash_key(plaintext))
        assert row is not None and row.id == reader.id and row.role == "reader"
        assert keys.find_by_hash(hash_key(plaintext + "x")) is None
        assert keys.count_active() == 2 and keys.count_active("admin") == 1
    revoked = revoke_key(session_factory, reader.id)
    assert not revoked.active and revoked.revoked_at is not None
    again = revoke_key(session_factory, reader.id)  # idempotent, keeps the first time
    assert again.revoked_at == revoked.revoked_at
    with session_factory.begin() as session:
        assert ApiKeys(session).count_active() == 1
    assert [(v.name, v.active) for v in list_keys(session_factory)] == [
        ("ops", True),
        ("dash board", False),
    ]
    with pytest.raises(NotFound):
        revoke_key(session_factory, 12345)


def test_last_admin_is_protected_unless_forced(session_factory: sessionmaker[Session]) -> None:
    first, _ = create_key(session_factory, "ops", "admin")
    with pytest.raises(Conflict, match="last active admin key"):
        revoke_key(session_factory, first.id)
    second, _ = create_key(session_factory, "ops2", "admin")
    assert not revoke_key(session_factory, first.id).active
    assert not revoke_key(session_factory, second.id, force=True).active


@pytest.mark.parametrize(
    ("name", "role", "field"),
    [
        ("", "admin", "name"),
        ("x" * 129, "admin", "name"),
        ("bad/name", "admin", "name"),
        ("ok", "root", "role"),
    ],
)
def test_invalid_names_and_roles(
    session_factory: sessionmaker[Session], name: str, role: str, field: str
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        create_key(session_factory, name, role)
    assert caught.value.field == field
    with session_factory.begin() as session:
        assert session.scalars(select(ApiKey)).all() == []


def test_touch_records_last_use(session_factory: sessionmaker[Session]) -> None:
    view, _ = create_key(session_factory, "ops", "admin")
    assert view.last_used_at is None
    with session_factory.begin() as session:
        ApiKeys(session).touch(view.id)
    assert list_keys(session_factory)[0].last_used_at is not None


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        ({"bad key": "v"}, "tags"),
        ({"k" * 65: "v"}, "tags"),
        ({"k": "v" * 257}, "tags.k"),
        ({"k": "line\nbreak"}, "tags.k"),
        ({f"k{i}": "v" for i in range(51)}, "tags"),
    ],
)
def test_tags_are_validated_before_the_database(
    session_factory: sessionmaker[Session], tags: dict[str, str], field: str
) -> None:
    with session_factory.begin() as session:
        with pytest.raises(InvalidArgument) as caught:
            Registry(session).create_model("m", tags=tags)
        assert caught.value.field == field
    with session_factory.begin() as session:
        model = Registry(session).create_model("m", tags={"team.risk-1": "é ok", "k": "v" * 256})
        assert model.tags["k"] == "v" * 256
