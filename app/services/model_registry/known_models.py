"""The set of registered model names, kept in memory for the metrics' ``model`` label.

A name taken from a URL becomes a Prometheus label value only when a model of that name
exists; any other name (a typo, a scan, a flood of random names, refused with 401, 404
or 422) is counted under the one fixed value :data:`OTHER`, so anonymous requests cannot
grow the metrics. The set is re-read with one small query (``SELECT name FROM
registered_models``) every ``refresh_seconds`` by a background task, in a worker thread,
never per request and never on the event loop; a model registered by this process is
added at once (:meth:`KnownModels.add`), one registered by another process or replica
within ``refresh_seconds``. A failed refresh (database down) keeps the last set.
"""

from __future__ import annotations

import contextlib
import logging

from sqlalchemy.orm import Session, sessionmaker

from app.errors import ServiceError
from app.registry.repository import reading
from app.services.common.periodic import every

log = logging.getLogger(__name__)

OTHER = "_other"


class KnownModels:
    """Names of the registered models (a frozenset swapped whole: safe to read anywhere)."""

    def __init__(self, sessions: sessionmaker[Session], refresh_seconds: float = 10.0) -> None:
        self._sessions = sessions
        self.refresh_seconds = refresh_seconds
        self._names: frozenset[str] = frozenset()

    def label(self, name: str) -> str:
        """``name`` if such a model exists (as last seen), else :data:`OTHER`."""
        return name if name in self._names else OTHER

    def add(self, name: str) -> None:
        """Record a model registered by this process (visible to the label at once)."""
        if name not in self._names:
            self._names = self._names | {name}

    def refresh(self) -> bool:
        """Re-read every name (blocking: call it in a worker thread). False on failure."""
        try:
            with reading(self._sessions) as registry:
                names = registry.model_names()
        except ServiceError as error:  # the database is down: keep the last set
            log.debug("model names not refreshed: %s", error)
            return False
        except Exception:  # e.g. no registry tables yet: keep the last set, keep refreshing
            log.warning("model names not refreshed", exc_info=True)
            return False
        self._names = names
        return True

    def refreshing(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Refresh now (in a thread) and then every ``refresh_seconds`` until the block ends."""
        return every(self.refresh_seconds, self.refresh)

    def __len__(self) -> int:
        return len(self._names)
