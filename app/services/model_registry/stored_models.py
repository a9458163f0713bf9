"""Loading a version's stored artifact, with the base artifact it shares arrays with.

A recalibrated version's artifact holds its new calibration map and names, by sha256,
the artifact that holds the booster arrays it shares (:mod:`models.inference.artifacts`, format
version 3); that artifact belongs to an earlier version of the same model. Every
service that loads a stored model goes through :func:`load_stored`, so both kinds load
alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import ArtifactCorrupted
from app.registry.orm import ModelVersion
from app.registry.repository import Registry
from app.services.common.core_errors import core_errors
from models.inference.artifacts import artifact_base, load_model, sha256_hex
from models.inference.model import InferenceModel

__all__ = ["StoredModel", "load_stored", "read_stored"]


@dataclass(frozen=True)
class StoredModel:
    """A version's artifact bytes and, when it has one, its base artifact and version."""

    blob: bytes
    sha256: str
    base: bytes | None = None
    base_version: int | None = None
    version: int | None = None  # the version whose artifact ``blob`` is (for messages)

    def load(self) -> InferenceModel:
        """The model, both digests checked (``ARTIFACT_CORRUPTED`` if anything fails;
        its message says whose artifact failed: this version's or its base version's)."""
        try:
            with core_errors():
                return load_model(self.blob, expected_sha256=self.sha256, base=self.base)
        except ArtifactCorrupted as error:  # hashed again only on this error path
            own = "this version" if self.version is None else f"version {self.version}"
            if sha256_hex(self.blob) != self.sha256:
                raise ArtifactCorrupted(_tampered(own)) from None
            if self.base is not None and sha256_hex(self.base) != artifact_base(self.blob):
                raise ArtifactCorrupted(
                    f"{own} shares the booster of version {self.base_version}, and "
                    + _tampered(f"version {self.base_version}")
                ) from None
            raise ArtifactCorrupted(f"the stored artifact of {own}: {error.detail}") from None


def _tampered(whose: str) -> str:
    """The message of an artifact whose bytes no longer match their recorded digest."""
    return (
        f"the stored artifact of {whose} fails its sha256 checksum (integrity check: its "
        "bytes changed since it was registered); it is never used (retrain, or restore "
        "the artifact)"
    )


def read_stored(reg: Registry, version: ModelVersion) -> StoredModel:
    """Read ``version``'s artifact and, if it shares arrays, its base artifact.

    The artifact's digest is checked before its manifest is read, so a tampered blob is
    reported as such (naming the version) whatever its bytes now hold."""
    blob = reg.get_artifact(version)
    if sha256_hex(blob) != version.artifact_sha256:
        raise ArtifactCorrupted(_tampered(f"version {version.version}"))
    with core_errors():
        base_sha = artifact_base(blob)
    if base_sha is None:
        return StoredModel(blob, version.artifact_sha256, version=version.version)
    found = reg.find_artifact_by_sha256(version.model_id, base_sha)
    if found is None:
        raise ArtifactCorrupted(
            f"stored artifact cannot be loaded: version {version.version} shares its booster "
            f"with an artifact ({base_sha[:12]}...) that no version of this model holds"
        )
    base_version, base = found
    return StoredModel(blob, version.artifact_sha256, base, base_version, version.version)


def load_stored(reg: Registry, version: ModelVersion) -> InferenceModel:
    """The served model of ``version`` (see :func:`read_stored`)."""
    return read_stored(reg, version).load()
