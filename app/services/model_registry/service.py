"""Reading the registry and moving aliases: views the API can render directly."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import ArtifactCorrupted, Conflict
from app.registry.alias_moves import Actor, alias_history, record_move
from app.registry.orm import ModelVersion, RegisteredModel, utcnow
from app.registry.repository import Registry, reading, writing
from app.services.model_registry.stored_models import read_stored


@dataclass(frozen=True, kw_only=True)
class VersionRecords:
    """What a version was trained with and measured at: the records a new version is
    registered with (``registration.NewVersion``) and its view reads back."""

    algorithm: str
    params: dict[str, Any]
    calibration: dict[str, Any]
    data: dict[str, Any]
    metrics: dict[str, Any]
    training_seconds: float


@dataclass(frozen=True, kw_only=True)
class _VersionIdentity:
    """Which version a view shows: the first fields of its JSON, before its records."""

    model: str
    version: int
    status: str


@dataclass(frozen=True, kw_only=True)
class VersionView(VersionRecords, _VersionIdentity):
    # dataclass fields follow the reversed method resolution order: the identity first,
    # then the records, then these (the key order of the API's version JSON)
    artifact_sha256: str
    artifact_size: int
    aliases: list[str]
    created_at: datetime
    parent_version: int | None = None  # recalibrated from this version (shares its booster)


@dataclass(frozen=True)
class ModelView:
    name: str
    description: str
    tags: dict[str, str]
    latest_version: int | None
    aliases: dict[str, int]
    prediction_log: bool
    created_at: datetime
    updated_at: datetime


#: The actor of moves made by the service itself or by code without a caller (tests, scripts).
SYSTEM = Actor("system", "admin")


@dataclass(frozen=True)
class AliasMoveView:
    """One move of an alias as the audit trail keeps it."""

    alias: str
    from_version: int | None
    to_version: int | None
    actor: str
    actor_role: str
    reason: str
    note: str
    evidence: dict[str, Any] | None
    at: datetime


def version_view(model_name: str, v: ModelVersion, aliases: list[str]) -> VersionView:
    return VersionView(
        model=model_name,
        version=v.version,
        status=v.status,
        algorithm=v.algorithm,
        params=dict(v.params or {}),
        calibration=dict(v.calibration or {}),
        data=dict(v.data or {}),
        metrics=dict(v.metrics or {}),
        training_seconds=float(v.training_seconds),
        artifact_sha256=v.artifact_sha256,
        artifact_size=int(v.artifact_size),
        aliases=sorted(aliases),
        created_at=v.created_at,
        parent_version=_parent_version(v.params),
    )


def _parent_version(params: dict[str, Any] | None) -> int | None:
    recalibration = (params or {}).get("recalibration")
    if not isinstance(recalibration, dict):
        return None
    parent = recalibration.get("parent_version")
    return parent if isinstance(parent, int) and not isinstance(parent, bool) else None


def _model_view(reg: Registry, m: RegisteredModel) -> ModelView:
    by_version = reg.aliases_by_version(m)
    aliases = {a: ver for ver, names in by_version.items() for a in names}
    versions = reg.list_versions(m.name, limit=1, newest_first=True)
    return ModelView(
        name=m.name,
        description=m.description or "",
        tags=dict(m.tags or {}),
        latest_version=versions[0].version if versions else None,
        aliases=dict(sorted(aliases.items())),
        prediction_log=m.prediction_log,
        created_at=m.created_at,
        updated_at=m.updated_at,
    )


class ModelRegistry:
    """Use cases that read models and versions, and move aliases."""

    def __init__(
        self, sessions: sessionmaker[Session], read_sessions: sessionmaker[Session] | None = None
    ) -> None:
        self._sessions = sessions
        self._read = read_sessions or sessions

    def list_models(self, limit: int = 100, offset: int = 0) -> tuple[list[ModelView], int]:
        with reading(self._read) as reg:
            return [_model_view(reg, m) for m in reg.list_models(limit, offset)], reg.count_models()

    def get_model(self, name: str) -> ModelView:
        with reading(self._read) as reg:
            return _model_view(reg, reg.get_model(name))

    def list_versions(self, name: str, limit: int = 100, offset: int = 0) -> list[VersionView]:
        with reading(self._read) as reg:
            by_version = reg.aliases_by_version(reg.get_model(name))
            return [
                version_view(name, v, by_version.get(v.version, []))
                for v in reg.list_versions(name, limit, offset, newest_first=True)
            ]

    def get_version(self, name: str, version: int) -> VersionView:
        with reading(self._read) as reg:
            v = reg.get_version(name, version)
            return version_view(name, v, reg.aliases_by_version(v.model).get(v.version, []))

    def set_alias(
        self,
        name: str,
        alias: str,
        version: int,
        actor: Actor = SYSTEM,
        *,
        note: str = "",
        reason: str = "manual",
        evidence: dict[str, Any] | None = None,
        expected_from: int | None = None,
    ) -> int:
        """Point ``alias`` at ``version`` once the version actually loads: its artifact and,
        for a recalibrated version, the base artifact whose booster it shares pass their
        sha256 checks and build a model. Anything broken is a 409 naming the artifact
        (and the alias is not moved), not a 500 on every later predict.

        The move and its record in the audit trail (who: ``actor``; why: ``reason``,
        ``note`` and the promotion's ``evidence``) are one transaction. With
        ``expected_from``, the alias must still point at that version when it is moved
        (a promotion decided on a comparison with it), else 409 and nothing moves.

        The load runs outside the write transaction (artifacts are immutable: the
        version checked is the version moved to), so the write lock is held briefly."""
        try:
            with reading(self._read) as reg:
                stored = read_stored(reg, reg.get_version(name, version))
            stored.load()
        except ArtifactCorrupted as error:
            raise Conflict(
                f"version {version} of model {name!r} cannot be served: {error.detail}; "
                f"alias {alias!r} was not moved (retrain or restore the artifact, or choose "
                "another version)",
                field="version",
            ) from None
        with writing(self._sessions) as reg:
            current = reg.find_alias(name, alias)
            before = None if current is None else current.model_version.version
            if expected_from is not None and before != expected_from:
                raise Conflict(
                    f"alias {alias!r} of model {name!r} points at version {before} now, not "
                    f"{expected_from} as when the candidate was compared; not moved (compare "
                    "again)",
                    field="alias",
                )
            moved = reg.set_alias(name, alias, version)
            record_move(
                reg.session, moved.model_id, alias, before, version, actor, reason, note, evidence
            )
            return version

    def alias_history(self, name: str, alias: str, limit: int = 100) -> list[AliasMoveView]:
        """The moves of ``alias`` (also a removed one), newest first; NotFound for an
        alias that never existed."""
        with reading(self._read) as reg:
            model = reg.get_model(name)
            moves = alias_history(reg.session, model.id, alias, limit)
            if not moves:
                reg.get_alias(name, alias)  # NotFound names the aliases that exist
            return [
                AliasMoveView(
                    alias=m.alias,
                    from_version=m.from_version,
                    to_version=m.to_version,
                    actor=m.actor,
                    actor_role=m.actor_role,
                    reason=m.reason,
                    note=m.note,
                    evidence=m.evidence,
                    at=m.created_at,
                )
                for m in moves
            ]

    def set_prediction_log(self, name: str, enabled: bool) -> ModelView:
        """Turn the logging of model ``name``'s predictions on or off (next request on)."""
        with writing(self._sessions) as reg:
            model = reg.get_model(name)
            model.prediction_log = enabled
            model.updated_at = utcnow()
            reg.session.flush()
            return _model_view(reg, model)

    def delete_alias(self, name: str, alias: str, actor: Actor = SYSTEM, *, note: str = "") -> None:
        with writing(self._sessions) as reg:
            current = reg.get_alias(name, alias)
            model_id, before = current.model_id, current.model_version.version
            reg.delete_alias(name, alias)
            record_move(reg.session, model_id, alias, before, None, actor, "removed", note)
