"""The registry repository: every query on registry tables goes through :class:`Registry`.

It adds and flushes, never commits: the caller (a service) owns the transaction, so a
version row and its artifact are committed together or not at all. Database errors
become :mod:`app.errors` domain errors here, never in the services: services open the
repository with :func:`reading` (a session) or :func:`writing` (one transaction), which
translate what the session itself raises too (connecting, lazy loads, the commit), and
resolve the hot path's version with :func:`lookup_ref`. ``get_*`` raise NotFound,
``find_*`` return None.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, ParamSpec, TypeVar

from sqlalchemy import and_, bindparam, delete, func, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db import database_errors
from app.errors import AlreadyExists, Conflict, NotFound
from app.registry.orm import (
    Alias,
    AliasSplit,
    Artifact,
    ModelVersion,
    RegisteredModel,
    TrainingJob,
    VersionPlot,
    utcnow,
)
from app.registry.validation import check_name, check_page, check_tags, check_version_metadata

__all__ = ["DEFAULT_ALIAS", "Registry", "find_ref", "lookup_ref", "reading", "writing"]

DEFAULT_ALIAS = "production"
_ALLOCATION_ATTEMPTS = 5

P = ParamSpec("P")
R = TypeVar("R")


class VersionRef(NamedTuple):
    """What the predict hot path needs to know about a resolved version (no ORM objects)."""

    id: int
    version: int
    sha256: str
    alias: str | None
    model_id: int = 0
    prediction_log: bool = True  # the model's switch (RegisteredModel.prediction_log)


_M = RegisteredModel.__table__
_V = ModelVersion.__table__
_A = Alias.__table__
_REF_COLUMNS = (_V.c.id, _V.c.version, _V.c.artifact_sha256, _V.c.model_id, _M.c.prediction_log)
_BY_VERSION = (
    select(*_REF_COLUMNS)
    .select_from(_V.join(_M, _V.c.model_id == _M.c.id))
    .where(_M.c.name == bindparam("name"), _V.c.version == bindparam("version"))
)
_BY_ALIAS = (
    select(*_REF_COLUMNS)
    .select_from(_A.join(_M, _A.c.model_id == _M.c.id).join(_V, _A.c.version_id == _V.c.id))
    .where(_M.c.name == bindparam("name"), _A.c.name == bindparam("alias"))
)
_BY_DEFAULT = (  # the production alias if set, else the latest version, in one statement
    select(*_REF_COLUMNS, _A.c.name)
    .select_from(
        _M.join(_V, _V.c.model_id == _M.c.id).outerjoin(
            _A, and_(_A.c.version_id == _V.c.id, _A.c.name == bindparam("default_alias"))
        )
    )
    .where(_M.c.name == bindparam("name"))
    .order_by(_A.c.id.is_(None), _V.c.version.desc())
    .limit(1)
)


def find_ref(
    conn: Connection, name: str, version: int | None = None, alias: str | None = None
) -> VersionRef | None:
    """The version to serve as plain values, or None: the predict hot path.

    One Core statement on a bare connection (no ORM session, no objects built); the
    rules are those of :meth:`Registry.resolve`.
    """
    with database_errors():
        if version is not None:
            row = conn.execute(_BY_VERSION, {"name": name, "version": version}).first()
            return None if row is None else VersionRef(row[0], row[1], row[2], None, row[3], row[4])
        if alias is not None:
            row = conn.execute(_BY_ALIAS, {"name": name, "alias": alias}).first()
            return (
                None if row is None else VersionRef(row[0], row[1], row[2], alias, row[3], row[4])
            )
        drow = conn.execute(_BY_DEFAULT, {"name": name, "default_alias": DEFAULT_ALIAS}).first()
        if drow is None:
            return None
        return VersionRef(drow[0], drow[1], drow[2], drow[5], drow[3], drow[4])


def lookup_ref(
    engine: Engine, name: str, version: int | None = None, alias: str | None = None
) -> VersionRef | None:
    """:func:`find_ref`'s answer with the least work per call: the predict hot path.

    The same statements, compiled once per dialect, run on a pooled DBAPI connection
    through the dialect's ``do_execute`` (so the statement deadline and the database
    health accounting of :func:`app.db.make_engine` apply) without SQLAlchemy's
    per-call execution context and result objects: one ``SELECT`` on a connection whose
    transaction the pool ends on return (on SQLite, in autocommit: one statement reads
    one snapshot). Driver errors are translated as :func:`database_errors` does.
    """
    if version is not None:
        stmt, values = _BY_VERSION, {"name": name, "version": version}
    elif alias is not None:
        stmt, values = _BY_ALIAS, {"name": name, "alias": alias}
    else:
        stmt, values = _BY_DEFAULT, {"name": name, "default_alias": DEFAULT_ALIAS}
    dialect = engine.dialect
    sql, compiled = _compiled(stmt, dialect)
    bound = compiled.construct_params(values)
    params: Any = (
        tuple(bound[k] for k in compiled.positiontup or ()) if compiled.positional else bound
    )
    with database_errors():
        try:
            raw = engine.raw_connection()
            try:
                cursor = raw.cursor()
                try:
                    dialect.do_execute(cursor, sql, params, None)
                    row = cursor.fetchone()
                finally:
                    cursor.close()
            except dialect.loaded_dbapi.Error as error:
                if dialect.is_disconnect(error, raw.dbapi_connection, None):
                    raw.invalidate(error)  # as SQLAlchemy's own execution would
                raise
            finally:
                raw.close()  # back to the pool, which ends the transaction
        except dialect.loaded_dbapi.Error as error:
            raise DBAPIError.instance(sql, params, error, dialect.loaded_dbapi.Error) from error
    if row is None:
        return None
    ref_alias = alias if version is None and alias is not None else None
    if stmt is _BY_DEFAULT:
        ref_alias = row[5]
    return VersionRef(row[0], row[1], row[2], ref_alias, row[3], bool(row[4]))


@functools.lru_cache(maxsize=64)  # bounded: a process with many engines (tests) keeps few
def _compiled(stmt: Any, dialect: Any) -> tuple[str, Any]:
    """A hot-path statement compiled for ``dialect``: its SQL text and compiled form."""
    compiled = stmt.compile(dialect=dialect)
    return str(compiled), compiled


@contextmanager
def reading(sessions: sessionmaker[Session]) -> Iterator[Registry]:
    """A :class:`Registry` on a new session (closed at the end); database errors raised
    anywhere in the block, the session's own included, become :class:`Unavailable`."""
    with database_errors(), sessions() as session:
        yield Registry(session)


@contextmanager
def writing(sessions: sessionmaker[Session]) -> Iterator[Registry]:
    """A :class:`Registry` in one transaction, committed at the end of the block and
    rolled back if it raises; database errors (the commit's included) become
    :class:`Unavailable`. ``registry.session`` is the transaction's session."""
    with database_errors(), sessions.begin() as session:
        yield Registry(session)


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    """Run ``method`` with connection errors turned into ``Unavailable``."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with database_errors():
            return method(*args, **kwargs)

    return wrapper


class Registry:
    """Registered models, their versions, artifacts and aliases, within one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    # ------------------------------------------------------------------ models

    @_translated
    def find_model(self, name: str) -> RegisteredModel | None:
        """The model called ``name``, or None."""
        query = select(RegisteredModel).where(RegisteredModel.name == name)
        return self.session.scalars(query).one_or_none()

    def get_model(self, name: str) -> RegisteredModel:
        """The model called ``name``; raises NotFound."""
        model = self.find_model(name)
        if model is None:
            raise NotFound(f"model {name!r} not found{self._in_training(name)}", field="name")
        return model

    @_translated
    def _in_training(self, name: str) -> str:
        """``": its first version is being trained (job ID is queued; ...)"`` when a
        training job for ``name`` is queued or running, else ``""``."""
        query = (
            select(TrainingJob.id, TrainingJob.status)
            .where(
                TrainingJob.model_name == name,
                TrainingJob.kind == "training",
                TrainingJob.status.in_(("queued", "running")),
            )
            .order_by(TrainingJob.created_at.desc())
            .limit(1)
        )
        job = self.session.execute(query).first()
        if job is None:
            return ""
        return (
            f": its first version is being trained (job {job.id} is {job.status}; "
            f"GET /v1/jobs/{job.id})"
        )

    @_translated
    def create_model(
        self, name: str, description: str = "", tags: dict[str, Any] | None = None
    ) -> RegisteredModel:
        """Add a model; raises AlreadyExists if the name is taken (also by a concurrent commit)."""
        check_name(name, "model name")
        check_tags(tags or {})
        if self.find_model(name) is not None:
            raise AlreadyExists(f"model {name!r} already exists", field="name")
        model = RegisteredModel(name=name, description=description, tags=dict(tags or {}))
        try:
            with self.session.begin_nested():
                self.session.add(model)
        except IntegrityError as error:
            raise AlreadyExists(f"model {name!r} already exists", field="name") from error
        return model

    def get_or_create_model(
        self, name: str, description: str | None = None, tags: dict[str, Any] | None = None
    ) -> RegisteredModel:
        """The model called ``name``, created (with ``description`` and ``tags``) if missing."""
        model = self.find_model(name)
        if model is not None:
            return model
        try:
            return self.create_model(name, description or "", tags)
        except AlreadyExists:  # created by a concurrent transaction since we looked
            return self.get_model(name)

    @_translated
    def list_models(self, limit: int = 100, offset: int = 0) -> list[RegisteredModel]:
        """Models ordered by name."""
        check_page(limit, offset)
        query = select(RegisteredModel).order_by(RegisteredModel.name).limit(limit).offset(offset)
        return list(self.session.scalars(query))

    @_translated
    def count_models(self) -> int:
        """Number of registered models."""
        return self.session.scalar(select(func.count()).select_from(RegisteredModel)) or 0

    @_translated
    def model_names(self) -> frozenset[str]:
        """The names of every registered model (one small query)."""
        return frozenset(self.session.scalars(select(RegisteredModel.name)))

    # ------------------------------------------------------------------ versions

    @_translated
    def add_version(
        self,
        model: RegisteredModel,
        *,
        algorithm: str,
        params: dict[str, Any],
        calibration: dict[str, Any],
        data: dict[str, Any],
        metrics: dict[str, Any],
        training_seconds: float,
        artifact: bytes,
        artifact_sha256: str,
    ) -> ModelVersion:
        """Add the next version of ``model`` and its artifact to the session (flushed).

        The number is max(version) + 1 read while holding a row lock on the model
        (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite transactions hold the database
        write lock from ``BEGIN IMMEDIATE``), so concurrent registrations queue and get
        consecutive numbers. Numbers have no gaps because the version and its artifact
        are committed by the caller in the same transaction, or not at all.
        """
        check_version_metadata(
            algorithm=algorithm,
            documents={
                "params": params,
                "calibration": calibration,
                "data": data,
                "metrics": metrics,
            },
            training_seconds=training_seconds,
            artifact=artifact,
            artifact_sha256=artifact_sha256,
        )
        for _ in range(_ALLOCATION_ATTEMPTS):
            lock = select(RegisteredModel.id).where(RegisteredModel.id == model.id)
            self.session.execute(lock.with_for_update())
            latest = select(func.max(ModelVersion.version)).where(ModelVersion.model_id == model.id)
            number = (self.session.scalar(latest) or 0) + 1
            version = ModelVersion(
                model=model,
                version=number,
                algorithm=algorithm,
                params=params,
                calibration=calibration,
                data=data,
                metrics=metrics,
                training_seconds=float(training_seconds),
                artifact_sha256=artifact_sha256,
                artifact_size=len(artifact),
                status="ready",
            )
            try:
                with self.session.begin_nested():
                    self.session.add(version)
                    self.session.flush()
                    self.session.add(
                        Artifact(version_id=version.id, sha256=artifact_sha256, data=artifact)
                    )
            except IntegrityError:  # (model_id, version) taken by a concurrent commit
                continue
            model.updated_at = utcnow()
            self.session.flush()
            return version
        raise Conflict(
            f"could not allocate a version number for model {model.name!r} after "
            f"{_ALLOCATION_ATTEMPTS} attempts (too many concurrent registrations); retry"
        )

    @_translated
    def list_versions(
        self, name: str, limit: int = 100, offset: int = 0, *, newest_first: bool = False
    ) -> list[ModelVersion]:
        """Versions of model ``name`` (oldest first by default), without loading artifacts."""
        check_page(limit, offset)
        model = self.get_model(name)
        order = ModelVersion.version.desc() if newest_first else ModelVersion.version
        query = (
            select(ModelVersion)
            .where(ModelVersion.model_id == model.id)
            .order_by(order)
            .limit(limit)
            .offset(offset)
        )
        return list(self.session.scalars(query))

    @_translated
    def count_versions(self, name: str) -> int:
        """Number of versions of model ``name``."""
        model = self.get_model(name)
        query = select(func.count()).where(ModelVersion.model_id == model.id)
        return self.session.scalar(query) or 0

    @_translated
    def find_version(self, name: str, version: int) -> ModelVersion | None:
        """Version ``version`` of model ``name``, or None."""
        query = (
            select(ModelVersion)
            .join(ModelVersion.model)
            .where(RegisteredModel.name == name, ModelVersion.version == version)
        )
        return self.session.scalars(query).one_or_none()

    def get_version(self, name: str, version: int) -> ModelVersion:
        """Version ``version`` of model ``name``; NotFound says what exists instead."""
        found = self.find_version(name, version)
        if found is not None:
            return found
        model = self.get_model(name)
        latest = self._latest_number(model)
        existing = f"latest is {latest}" if latest else "it has no versions yet"
        raise NotFound(f"model {name!r} has no version {version} ({existing})", field="version")

    @_translated
    def latest_version(self, name: str) -> ModelVersion:
        """The highest-numbered version of model ``name``; NotFound if it has none."""
        query = (
            select(ModelVersion)
            .join(ModelVersion.model)
            .where(RegisteredModel.name == name)
            .order_by(ModelVersion.version.desc())
            .limit(1)
        )
        found = self.session.scalars(query).first()
        if found is None:
            self.get_model(name)
            raise NotFound(
                f"model {name!r} has no versions yet{self._in_training(name)}", field="name"
            )
        return found

    def _latest_number(self, model: RegisteredModel) -> int:
        query = select(func.max(ModelVersion.version)).where(ModelVersion.model_id == model.id)
        return self.session.scalar(query) or 0

    # ------------------------------------------------------------------ resolution, artifacts

    def resolve(
        self, name: str, version: int | None = None, alias: str | None = None
    ) -> tuple[ModelVersion, str | None]:
        """The version to serve and the alias that chose it (None if no alias did).

        Precedence: explicit ``version`` > explicit ``alias`` > the ``production`` alias
        if it is set > the latest version.
        """
        if version is not None:
            return self.get_version(name, version), None
        if alias is not None:
            return self.get_alias(name, alias).model_version, alias
        default = self.find_alias(name, DEFAULT_ALIAS)
        if default is not None:
            return default.model_version, DEFAULT_ALIAS
        return self.latest_version(name), None

    def resolve_ref(
        self, name: str, version: int | None = None, alias: str | None = None
    ) -> VersionRef:
        """Same rules as :meth:`resolve`, as one Core statement (see :func:`find_ref`).

        When nothing matches, :meth:`resolve` raises the NotFound that says what exists.
        """
        ref = find_ref(self.session.connection(), name, version, alias)
        if ref is None:
            found, used = self.resolve(name, version=version, alias=alias)
            ref = VersionRef(
                found.id,
                found.version,
                found.artifact_sha256,
                used,
                found.model_id,
                found.model.prediction_log,
            )
        return ref

    @_translated
    def get_artifact(self, version: ModelVersion) -> bytes:
        """The artifact bytes of ``version`` (the only method that reads blobs)."""
        query = select(Artifact.data).where(Artifact.version_id == version.id)
        data = self.session.scalar(query)
        if data is None:
            raise NotFound(f"version {version.version} has no stored artifact")
        return bytes(data)

    @_translated
    def find_artifact_by_sha256(self, model_id: int, sha256: str) -> tuple[int, bytes] | None:
        """``(version number, artifact bytes)`` of the version of model ``model_id`` whose
        artifact has digest ``sha256`` (the lowest such version), or None.

        A recalibrated version's artifact names the artifact holding its booster arrays
        by digest (:mod:`models.inference.artifacts`, format version 3); this finds it.
        """
        query = (
            select(ModelVersion.version, Artifact.data)
            .join(Artifact, Artifact.version_id == ModelVersion.id)
            .where(ModelVersion.model_id == model_id, ModelVersion.artifact_sha256 == sha256)
            .order_by(ModelVersion.version)
            .limit(1)
        )
        row = self.session.execute(query).first()
        return None if row is None else (int(row[0]), bytes(row[1]))

    # ------------------------------------------------------------------ plots

    @_translated
    def add_plots(
        self, version: ModelVersion, plots: Iterable[tuple[str, dict[str, Any], str | None]]
    ) -> None:
        """Add the plot rows ``(kind, data, svg)`` of ``version`` to the session (flushed)."""
        for kind, data, svg in plots:
            self.session.add(VersionPlot(version_id=version.id, kind=kind, data=data, svg=svg))
        self.session.flush()

    @_translated
    def plot_kinds(self, version: ModelVersion) -> list[str]:
        """Kinds of the plot rows stored for ``version`` (without loading their data)."""
        query = select(VersionPlot.kind).where(VersionPlot.version_id == version.id)
        return list(self.session.scalars(query))

    @_translated
    def find_plot(self, version: ModelVersion, kind: str) -> VersionPlot | None:
        """The plot row ``kind`` of ``version``, or None."""
        query = select(VersionPlot).where(
            VersionPlot.version_id == version.id, VersionPlot.kind == kind
        )
        return self.session.scalars(query).one_or_none()

    # ------------------------------------------------------------------ aliases

    @_translated
    def find_alias(self, name: str, alias: str) -> Alias | None:
        """Alias ``alias`` of model ``name`` (with its version loaded), or None."""
        query = (
            select(Alias)
            .join(RegisteredModel, Alias.model_id == RegisteredModel.id)
            .where(RegisteredModel.name == name, Alias.name == alias)
        )
        return self.session.scalars(query).one_or_none()

    def get_alias(self, name: str, alias: str, field: str | None = None) -> Alias:
        """Alias ``alias`` of model ``name``; NotFound lists the aliases that exist (and
        names ``field``, its message starting with it, when the alias came in a field other
        than ``alias``)."""
        found = self.find_alias(name, alias)
        if found is not None:
            return found
        existing = ", ".join(a.name for a in self.list_aliases(name)) or "none"
        prefix = f"{field}: " if field else ""
        raise NotFound(
            f"{prefix}model {name!r} has no alias {alias!r} (aliases: {existing})",
            field=field or "alias",
        )

    @_translated
    def set_alias(self, name: str, alias: str, version: int) -> Alias:
        """Point ``alias`` of model ``name`` at ``version`` (created or moved)."""
        check_name(alias, "alias")
        target = self.get_version(name, version)
        for _ in range(_ALLOCATION_ATTEMPTS):
            current = self.find_alias(name, alias)
            if current is not None:
                current.version_id = target.id
                current.model_version = target
                current.updated_at = utcnow()
                self.session.flush()
                return current
            created = Alias(model_id=target.model_id, name=alias, version_id=target.id)
            created.model_version = target
            try:
                with self.session.begin_nested():
                    self.session.add(created)
            except IntegrityError:  # created concurrently: move it instead
                continue
            return created
        raise Conflict(f"alias {alias!r} of model {name!r} is being changed concurrently; retry")

    @_translated
    def delete_alias(self, name: str, alias: str) -> None:
        """Remove ``alias`` from model ``name`` (and its traffic split, if any); NotFound if
        it does not exist."""
        found = self.get_alias(name, alias)
        self.session.execute(
            delete(AliasSplit).where(
                AliasSplit.model_id == found.model_id, AliasSplit.alias == alias
            )
        )
        self.session.delete(found)
        self.session.flush()

    @_translated
    def list_aliases(self, name: str) -> list[Alias]:
        """Aliases of model ``name`` ordered by name (with their versions loaded)."""
        model = self.get_model(name)
        query = select(Alias).where(Alias.model_id == model.id).order_by(Alias.name)
        return list(self.session.scalars(query))

    @_translated
    def aliases_by_version(self, model: RegisteredModel) -> dict[int, list[str]]:
        """Version number -> sorted alias names, for the versions that have aliases."""
        query = (
            select(ModelVersion.version, Alias.name)
            .join(Alias, Alias.version_id == ModelVersion.id)
            .where(Alias.model_id == model.id)
            .order_by(ModelVersion.version, Alias.name)
        )
        result: dict[int, list[str]] = {}
        for number, alias in self.session.execute(query):
            result.setdefault(number, []).append(alias)
        return result
