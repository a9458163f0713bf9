"""The server around the app: connections, the HTTP protocol, pure-ASGI middleware.

- :mod:`~app.api.server.protocol`: uvicorn's HTTP protocol with a deadline and a size
  limit for the request head.
- :mod:`~app.api.server.connection_budget`: the connection budget of ``costwise serve``
  (who is closed when it is full, the file-descriptor limit it needs).
- :mod:`~app.api.server.middleware`: the request-body limit and Prometheus metrics as
  plain ASGI callables.

Imports no route and no service (the metrics middleware is handed the known model names by
the app factory); the app factory and ``costwise serve`` compose it.
"""
