"""The unit of work that registers a version: row, artifact and plots, all or nothing.

Training (:class:`app.services.training.Trainer`) and recalibration
(:class:`app.services.feedback.recalibration.Recalibrator`) both end here: the version number is
allocated under the model's row lock (:meth:`app.registry.repository.Registry.add_version`)
and the version row, its artifact and its plot rows are committed in one transaction,
or nothing is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from app.registry.repository import writing
from app.services.model_registry.service import VersionRecords, VersionView, version_view
from app.services.plots.precompute import PlotRow

__all__ = ["NewVersion", "register_version"]


@dataclass(frozen=True, kw_only=True)
class NewVersion(VersionRecords):
    """Everything a version is registered with (its records, artifact and plots)."""

    artifact: bytes
    artifact_sha256: str
    plots: Sequence[PlotRow] = field(default_factory=tuple)


def register_version(
    sessions: sessionmaker[Session],
    name: str,
    new: NewVersion,
    *,
    create: bool = False,
    description: str | None = None,
    tags: dict[str, str] | None = None,
    within: Callable[[Session, int], None] | None = None,
) -> VersionView:
    """Register ``new`` as the next version of model ``name`` in one transaction.

    ``create``: the model is created (with ``description`` and ``tags``) if missing, and
    they are updated when given; otherwise a missing model is NotFound.
    ``within(session, version)`` runs inside the transaction (a training job records its
    outcome there, so that both are committed together or not at all).
    """
    with writing(sessions) as reg:
        if create:
            m = reg.get_or_create_model(name, description=description, tags=tags)
            if description is not None:
                m.description = description
            if tags is not None:
                m.tags = dict(tags)
        else:
            m = reg.get_model(name)
        v = reg.add_version(
            m,
            algorithm=new.algorithm,
            params=new.params,
            calibration=new.calibration,
            data=new.data,
            metrics=new.metrics,
            training_seconds=new.training_seconds,
            artifact=new.artifact,
            artifact_sha256=new.artifact_sha256,
        )
        reg.add_plots(v, new.plots)
        if within is not None:
            within(reg.session, v.version)
        return version_view(name, v, [])
