"""Helpers shared by the tests of :mod:`models` (imported by name, not fixtures)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any


def rezip(
    blob: bytes,
    edit_manifest: Callable[[dict[str, Any]], Any] | None = None,
    extra: dict[str, bytes] | None = None,
    replace: dict[str, bytes] | None = None,
) -> bytes:
    """An artifact ``blob`` written again with its manifest edited in place by
    ``edit_manifest``, the members named in ``replace`` given new bytes and the members of
    ``extra`` added (to check that loading refuses what a tampered file holds)."""
    src = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "manifest.json" and edit_manifest:
                manifest = json.loads(data)
                edit_manifest(manifest)
                data = json.dumps(manifest).encode()
            if replace and info.filename in replace:
                data = replace[info.filename]
            dst.writestr(info, data)
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
    return out.getvalue()
