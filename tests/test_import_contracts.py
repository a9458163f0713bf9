"""The import contracts of pyproject.toml's [tool.importlinter] hold (import-linter).

Layers of the service (api and cli over services over registry over db), a core that
imports nothing of the service, web or SQL stack, a client that stands alone, no web
framework below the API, no import circle between sibling modules (imports inside
functions count), and the rooms of app.services in their layers (a new room must be given
its place; the feedback loop never imports prediction or training; access imports no other
room). A new back-edge or circle fails here with the chain that closes it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    out = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout
