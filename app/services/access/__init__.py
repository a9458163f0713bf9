"""Access: who is calling, and the API keys that say so.

- :mod:`~app.services.access.auth`: API keys checked against the registry, with a short
  in-memory cache (``Authenticator``, ``Principal``).
- :mod:`~app.services.access.keys`: use cases on API keys (create, list, revoke), for the
  CLI and HTTP.
- :mod:`~app.services.access.key_strength`: how guessable a bootstrap admin key looks.

Imports no other service room: who may call is decided before any use case runs.
"""
