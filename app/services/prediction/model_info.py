"""What a served model looks like from outside: the facts behind V2 model metadata."""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import ArtifactCorrupted
from app.services.model_registry.service import ModelRegistry
from app.services.prediction.predictor import Predictor, Resolved
from models.inference.model import InferenceModel

MAX_LISTED_VERSIONS = 1000


@dataclass(frozen=True)
class ModelInfo:
    resolved: Resolved
    model: InferenceModel
    versions: list[int]  # newest first, at most MAX_LISTED_VERSIONS

    @property
    def algorithm(self) -> str:
        return str(self.model.metadata.get("algorithm", "unknown"))


def describe_model(
    predictor: Predictor, registry: ModelRegistry, name: str, version: int | None = None
) -> ModelInfo:
    """The version that would serve (as predict resolves it), its model and all versions."""
    resolved = predictor.resolve(name, version)
    model = predictor.load(resolved)
    views = registry.list_versions(name, limit=MAX_LISTED_VERSIONS)
    return ModelInfo(resolved, model, [v.version for v in views])


def model_ready(predictor: Predictor, name: str, version: int | None = None) -> bool:
    """Whether the version resolves and its artifact loads (NotFound propagates)."""
    resolved = predictor.resolve(name, version)
    try:
        predictor.load(resolved)
    except ArtifactCorrupted:
        return False
    return True
