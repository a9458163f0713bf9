"""costwise: a typed client of the costwise service (``costwise.client``).

Importing this package loads httpx and the standard library only.
"""

from costwise._core import Retry
from costwise.client import AsyncClient, Client
from costwise.errors import (
    Conflict,
    CostwiseError,
    Forbidden,
    InvalidArgument,
    JobTimeout,
    NotFound,
    PayloadTooLarge,
    ServerError,
    Unauthorized,
    Unavailable,
    UnexpectedResponse,
)

__all__ = [
    "AsyncClient",
    "Client",
    "Conflict",
    "CostwiseError",
    "Forbidden",
    "InvalidArgument",
    "JobTimeout",
    "NotFound",
    "PayloadTooLarge",
    "Retry",
    "ServerError",
    "Unauthorized",
    "Unavailable",
    "UnexpectedResponse",
]
