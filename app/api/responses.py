"""A JSON response rendered by orjson (numpy arrays and scalars serialise natively)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response


class FastJSONResponse(Response):
    """JSON via orjson; used for error bodies and the large predict responses."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)
