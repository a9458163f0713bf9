"""Model artifacts without pickle: a zip of ``manifest.json`` and ``.npy`` arrays.

Layout of format version 1::

    manifest.json        format_version, kind, classes, feature_names, n_features,
                         score_kind, ensemble {kind, arrays: {name: file}},
                         calibrator (numbers only), train_priors, metadata,
                         array_sha256 {file: digest}
    arrays/<name>.npy    one numeric array per ensemble array

Loading reads the manifest as JSON, checks ``format_version`` and that ``kind`` is on
an allow-list, reads every array with ``np.load(..., allow_pickle=False)``, checks
each array's digest and dtype, and builds an :class:`~models.inference.InferenceModel`
from numbers and arrays only. Nothing named in an artifact is ever imported. The
sha256 of the whole blob is returned by :func:`dump_model` and checked by
:func:`load_model` when the caller passes the digest it stored beside the blob.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from typing import Any

import numpy as np

from models.calibration import calibrator_from_state
from models.ensemble import Ensemble
from models.exceptions import ArtifactError, ArtifactIntegrityError
from models.inference import InferenceModel

FORMAT_VERSION = 1
KINDS = frozenset({"calibrated_binary"})
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
MAX_ARRAY_BYTES = 512 * 1024 * 1024
_NUMERIC_KINDS = frozenset("biuf")


def sha256_hex(blob: bytes) -> str:
    """Hex sha256 digest of ``blob``."""
    return hashlib.sha256(blob).hexdigest()


def _json_label(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | float | str):
        return value
    raise ArtifactError(f"class label {value!r} is not a JSON scalar")


def dump_model(model: InferenceModel, metadata: dict[str, Any] | None = None) -> tuple[bytes, str]:
    """Serialise ``model`` to artifact bytes.

    Parameters
    ----------
    model : InferenceModel
        E.g. ``CalibratedAdaMEC.to_inference()``.
    metadata : dict, optional
        JSON-able extra information (algorithm, parameters, ...).

    Returns
    -------
    blob, sha256 : bytes, str
    """
    arrays = model.ensemble.to_arrays()
    files: dict[str, bytes] = {}
    names: dict[str, str] = {}
    for name, arr in sorted(arrays.items()):
        arr = np.ascontiguousarray(arr)
        if arr.dtype.kind not in _NUMERIC_KINDS:
            raise ArtifactError(f"ensemble array {name!r} has non-numeric dtype {arr.dtype}")
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        fname = f"arrays/{name}.npy"
        files[fname] = buf.getvalue()
        names[name] = fname
    manifest = {
        "format_version": FORMAT_VERSION,
        "kind": "calibrated_binary",
        "classes": [_json_label(c) for c in model.classes],
        "feature_names": None if model.feature_names is None else list(model.feature_names),
        "n_features": int(model.n_features),
        "score_kind": model.score_kind,
        "ensemble": {"kind": model.ensemble.kind, "arrays": names},
        "calibrator": model.calibrator.to_state(),
        "train_priors": [float(p) for p in model.train_priors],
        "metadata": {**model.metadata, **(metadata or {})},
        "array_sha256": {f: sha256_hex(b) for f, b in files.items()},
    }
    out = io.BytesIO()
    # Fixed timestamps make equal models produce equal bytes (and equal digests).
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for fname, data in [
            ("manifest.json", json.dumps(manifest, sort_keys=True).encode()),
            *files.items(),
        ]:
            info = zipfile.ZipInfo(fname, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    blob = out.getvalue()
    return blob, sha256_hex(blob)


def _read_member(zf: zipfile.ZipFile, name: str, limit: int) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ArtifactError(f"artifact has no member {name!r}") from None
    if info.file_size > limit:
        raise ArtifactError(f"artifact member {name!r} is larger than {limit} bytes")
    return zf.read(info)


def load_model(blob: bytes, expected_sha256: str | None = None) -> InferenceModel:
    """Load artifact bytes into an :class:`InferenceModel`, never unpickling anything.

    Raises
    ------
    ArtifactIntegrityError
        The blob's digest differs from ``expected_sha256``, or an array's digest
        differs from the manifest's.
    ArtifactError
        Anything malformed: not a zip, unknown format version or kind, missing or
        non-numeric arrays, inconsistent shapes.
    """
    if expected_sha256 is not None and sha256_hex(blob) != expected_sha256:
        raise ArtifactIntegrityError(
            "artifact sha256 does not match the digest recorded for it; refusing to load"
        )
    try:
        zf = zipfile.ZipFile(io.BytesIO(blob))
        with zf:
            manifest = json.loads(_read_member(zf, "manifest.json", MAX_MANIFEST_BYTES))
            return _build(zf, manifest)
    except ArtifactError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, json.JSONDecodeError, EOFError) as exc:
        raise ArtifactError(f"artifact is not a valid costwise model: {exc}") from None
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise ArtifactError(f"artifact manifest is malformed: {exc}") from None


def _build(zf: zipfile.ZipFile, manifest: dict[str, Any]) -> InferenceModel:
    if not isinstance(manifest, dict):
        raise ArtifactError("artifact manifest must be a JSON object")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ArtifactError(
            f"unsupported artifact format_version {version!r} (this build reads {FORMAT_VERSION})"
        )
    kind = manifest.get("kind")
    if kind not in KINDS:
        raise ArtifactError(f"artifact kind {kind!r} is not one of {sorted(KINDS)}")
    digests = manifest["array_sha256"]
    arrays: dict[str, np.ndarray] = {}
    for name, fname in manifest["ensemble"]["arrays"].items():
        if not isinstance(fname, str) or fname != f"arrays/{name}.npy":
            raise ArtifactError(f"array {name!r} has an unexpected file name {fname!r}")
        data = _read_member(zf, fname, MAX_ARRAY_BYTES)
        if sha256_hex(data) != digests.get(fname):
            raise ArtifactIntegrityError(f"array {fname!r} does not match its recorded sha256")
        arr = np.load(io.BytesIO(data), allow_pickle=False)
        if arr.dtype.kind not in _NUMERIC_KINDS:
            raise ArtifactError(f"array {name!r} has non-numeric dtype {arr.dtype}")
        arrays[name] = arr
    n_features = int(manifest["n_features"])
    ensemble = Ensemble.from_arrays(
        arrays, kind=str(manifest["ensemble"]["kind"]), n_features=n_features
    )
    classes = tuple(_json_label(c) for c in manifest["classes"])
    if len(classes) != 2 or classes[0] == classes[1]:
        raise ArtifactError(f"a binary artifact needs two distinct classes, got {classes!r}")
    names = manifest.get("feature_names")
    if names is not None and (
        len(names) != n_features or not all(isinstance(n, str) for n in names)
    ):
        raise ArtifactError("feature_names must be n_features strings")
    priors = np.asarray(manifest["train_priors"], dtype=np.float64)
    if priors.shape != (2,) or not np.isfinite(priors).all() or (priors <= 0).any():
        raise ArtifactError("train_priors must be two positive finite numbers")
    score_kind = manifest["score_kind"]
    if score_kind not in ("vote", "logistic"):
        raise ArtifactError(f"unknown score_kind {score_kind!r}")
    metadata = manifest.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ArtifactError("metadata must be a JSON object")
    return InferenceModel(
        classes=classes,
        feature_names=None if names is None else tuple(names),
        ensemble=ensemble,
        score_kind=score_kind,
        calibrator=calibrator_from_state(manifest["calibrator"]),
        train_priors=priors,
        metadata=metadata,
    )
