"""Shadow decisions (``shadow_predictions``) and the labelled pairs they make with the log.

:func:`write_shadow_rows` inserts a batch of a shadow's decisions (an id already there
for that version is skipped: the first decision stands). :class:`PairedLog` reads what a
comparison needs: labelled pairs (the served row of ``logged_predictions`` and the
shadow's row for the same prediction id) and counts of them, with the served row's
label and cost matrix, as arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from sqlalchemy import Table, Text, func, select
from sqlalchemy import cast as cast_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.db import database_errors
from app.errors import Conflict, Unavailable
from app.registry.log_window import EVERYTHING, LogWindow
from app.registry.orm import LoggedPrediction, ShadowPrediction
from app.registry.prediction_log import _created, _parse_json_rows, _seconds, _transient

__all__ = ["PairedLog", "PairedRows", "write_shadow_rows"]

_T = cast(Table, LoggedPrediction.__table__)
_S = cast(Table, ShadowPrediction.__table__)


def write_shadow_rows(engine: Engine, rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert shadow decisions in one transaction; ids already decided by that version
    are skipped. Returns the rows inserted. Database errors translated as the log
    writer's are (:class:`Unavailable` when worth a retry, else :class:`Conflict`)."""
    if not rows:
        return 0
    insert = pg_insert if engine.dialect.name == "postgresql" else sqlite_insert
    stmt = (
        insert(_S)
        .on_conflict_do_nothing(index_elements=["model_id", "version_id", "prediction_id"])
        .returning(_S.c.id)  # counted from what comes back: executemany's rowcount is -1
    )
    try:
        with engine.begin() as conn:
            return len(conn.execute(stmt, list(rows)).all())
    except SQLAlchemyError as error:
        if _transient(error):
            raise Unavailable(f"the database is unavailable ({type(error).__name__})") from error
        raise Conflict(f"shadow rows refused by the database ({type(error).__name__})") from error


@dataclass(frozen=True)
class PairedRows:
    """Labelled prediction ids decided by the served version ``a`` and the shadow ``b``.

    ``costs`` are the served row's cost matrices (rows = truth): the shadow decided
    under the same costs."""

    label: np.ndarray  # (n,) class index
    costs: np.ndarray  # (n, K, K)
    proba_a: np.ndarray  # (n, K)
    decision_a: np.ndarray
    expected_a: np.ndarray
    proba_b: np.ndarray
    decision_b: np.ndarray
    expected_b: np.ndarray
    created_at: np.ndarray  # (n,) float64: POSIX seconds (UTC) of the served prediction

    def __len__(self) -> int:
        return len(self.label)

    def swapped(self) -> PairedRows:
        """The same pairs with the roles of ``a`` and ``b`` exchanged."""
        return PairedRows(
            self.label,
            self.costs,
            self.proba_b,
            self.decision_b,
            self.expected_b,
            self.proba_a,
            self.decision_a,
            self.expected_a,
            self.created_at,
        )

    @staticmethod
    def concat(parts: Sequence[PairedRows]) -> PairedRows:
        return PairedRows(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in PairedRows._fields())
        )

    @staticmethod
    def _fields() -> tuple[str, ...]:
        return (
            "label",
            "costs",
            "proba_a",
            "decision_a",
            "expected_a",
            "proba_b",
            "decision_b",
            "expected_b",
            "created_at",
        )


class PairedLog:
    """Shadow pairs of a model, within one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def _joined(self, model_id: int, served: int, shadow: int) -> Any:
        return (
            _S.join(
                _T,
                (_T.c.model_id == _S.c.model_id) & (_T.c.prediction_id == _S.c.prediction_id),
            ),
            (_S.c.model_id == model_id)
            & (_S.c.version == shadow)
            & (_T.c.version == served)
            & _T.c.label.is_not(None),
        )

    def count(
        self,
        model_id: int,
        served: int,
        shadow: int,
        window: LogWindow = EVERYTHING,
    ) -> int:
        """Labelled pairs (``served`` served, ``shadow`` shadowed) in the window, counted
        by the database."""
        joined, where = self._joined(model_id, served, shadow)
        query = window.where(select(func.count()).select_from(joined).where(where), _T.c.created_at)
        with database_errors():
            return int(self.session.scalar(query) or 0)

    def rows(
        self,
        model_id: int,
        served: int,
        shadow: int,
        n_classes: int,
        window: LogWindow = EVERYTHING,
    ) -> PairedRows:
        """The labelled pairs of the window, oldest first (JSON parsed once per column)."""
        joined, where = self._joined(model_id, served, shadow)
        postgres = self.session.get_bind().dialect.name == "postgresql"
        created = _created(postgres)
        query = (
            select(
                _T.c.label,
                cast_(_T.c.costs, Text),
                cast_(_T.c.probabilities, Text),
                _T.c.decision,
                _T.c.expected_cost,
                cast_(_S.c.probabilities, Text),
                _S.c.decision,
                _S.c.expected_cost,
                created,
            )
            .select_from(joined)
            .where(where)
            .order_by(_T.c.created_at, _T.c.id)
        )
        with database_errors():
            result = list(self.session.execute(window.where(query, _T.c.created_at)))
        k = (n_classes,)
        if not result:
            empty = np.empty(0)
            ints = np.empty(0, dtype=np.int64)
            return PairedRows(
                ints,
                np.empty((0, *k, *k)),
                np.empty((0, *k)),
                ints,
                empty,
                np.empty((0, *k)),
                ints,
                empty,
                empty,
            )
        label, costs, pa, da, ea, pb, db, eb, t = zip(*result, strict=True)
        return PairedRows(
            label=np.array(label, dtype=np.int64),
            costs=_parse_json_rows(list(costs), k * 2),
            proba_a=_parse_json_rows(list(pa), k),
            decision_a=np.array(da, dtype=np.int64),
            expected_a=np.array([np.nan if e is None else e for e in ea], dtype=np.float64),
            proba_b=_parse_json_rows(list(pb), k),
            decision_b=np.array(db, dtype=np.int64),
            expected_b=np.array([np.nan if e is None else e for e in eb], dtype=np.float64),
            created_at=_seconds(t, postgres),
        )

    def shadow_versions(self, model_id: int) -> list[int]:
        """Version numbers that have shadow decisions for the model."""
        query = select(_S.c.version).where(_S.c.model_id == model_id).distinct()
        with database_errors():
            return sorted(self.session.scalars(query))
