"""The web console: one HTML page and its static files, outside ``/v1`` and always open.

The page holds no data: the browser calls the ``/v1`` API with the API key the user types
(``Authorization: Bearer``), so the API's own roles apply to everything the console shows
or changes. Assets are served by name from an allow-list (the files shipped in
``app/console/static``) instead of a ``StaticFiles`` mount, so that requests keep a route
template (``/console/static/{asset}``) for the metrics and the auth policy table.
"""

from __future__ import annotations

from fastapi import APIRouter, Path, Response

from app.console import find_asset, page
from app.errors import NotFound

router = APIRouter(tags=["console"], include_in_schema=False)

# Everything the page loads comes from this origin; API data is only ever put in the page
# as text (never as HTML), and plots are shown as <img> from blob: URLs.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@router.get("/console", response_class=Response, summary="The web console (HTML)")
def console_page() -> Response:
    return Response(page(), media_type="text/html; charset=utf-8", headers=SECURITY_HEADERS)


@router.get("/console/static/{asset}", response_class=Response, summary="A console asset")
def console_asset(asset: str = Path(max_length=100)) -> Response:
    found = find_asset(asset)
    if found is None:
        raise NotFound(f"the console has no static file {asset!r}", field="asset")
    return Response(found.content, media_type=found.media_type, headers=SECURITY_HEADERS)
