"""The model registry: typed ORM tables and the :class:`Registry` repository."""

from app.registry.orm import Alias, Artifact, Base, ModelVersion, RegisteredModel
from app.registry.repository import DEFAULT_ALIAS, Registry

__all__ = [
    "DEFAULT_ALIAS",
    "Alias",
    "Artifact",
    "Base",
    "ModelVersion",
    "RegisteredModel",
    "Registry",
]
