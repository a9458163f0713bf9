"""The web console's files: one HTML page and its static JavaScript and CSS.

No build step: the files under ``static/`` are served as they are (ES modules, plain
CSS), shipped in the wheel as package data. Only the files present in the package can be
served: a request names an asset, never a path, so nothing outside ``static/`` is
reachable.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


@dataclass(frozen=True)
class Asset:
    """One static file of the console."""

    name: str
    content: bytes
    media_type: str


@cache
def page() -> bytes:
    """The console's HTML page."""
    return resources.files(__name__).joinpath("index.html").read_bytes()


@cache
def assets() -> dict[str, Asset]:
    """Every servable static file, by file name."""
    found: dict[str, Asset] = {}
    for entry in resources.files(__name__).joinpath("static").iterdir():
        suffix = "." + entry.name.rpartition(".")[2]
        if entry.is_file() and suffix in MEDIA_TYPES:
            found[entry.name] = Asset(entry.name, entry.read_bytes(), MEDIA_TYPES[suffix])
    return found


def find_asset(name: str) -> Asset | None:
    """The static file called ``name``, or None."""
    return assets().get(name)
