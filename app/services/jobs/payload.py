"""A job's training data at rest: a zip of ``.npy`` arrays (``np.savez``), never pickle.

``X`` (float64), ``y`` (the labels as parsed: integers, booleans or unicode strings) and,
when given, ``feature_names`` (unicode). Loading uses ``allow_pickle=False``, so an
object array could not even be read back; the sha256 of the blob is stored beside it
and checked on load.
"""

from __future__ import annotations

import hashlib
import io

import numpy as np

from app.errors import ArtifactCorrupted, InvalidArgument
from app.services.training import TrainingData

__all__ = ["pack_training_data", "unpack_training_data"]


def _plain(array: np.ndarray, name: str) -> np.ndarray:
    if array.dtype == object:
        try:
            return np.asarray(array.tolist(), dtype=np.str_)
        except (TypeError, ValueError):
            raise InvalidArgument(f"{name}: values cannot be stored", field=name) from None
    return array


def pack_training_data(data: TrainingData) -> tuple[bytes, str]:
    """The blob and its sha256 hex digest."""
    arrays = {"X": np.asarray(data.X, dtype=np.float64), "y": _plain(np.asarray(data.y), "y")}
    if data.feature_names is not None:
        arrays["feature_names"] = np.asarray(list(data.feature_names), dtype=np.str_)
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    blob = buffer.getvalue()
    return blob, hashlib.sha256(blob).hexdigest()


def unpack_training_data(blob: bytes, sha256: str) -> TrainingData:
    """The stored data; raises ArtifactCorrupted when the blob fails its checksum."""
    if hashlib.sha256(blob).hexdigest() != sha256:
        raise ArtifactCorrupted("the job's stored training data failed its sha256 check")
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        names = npz["feature_names"].tolist() if "feature_names" in npz.files else None
        return TrainingData(npz["X"], npz["y"], names)
