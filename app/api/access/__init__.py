"""Access over HTTP: who is calling and what their role may call.

- :mod:`~app.api.access.auth`: the authentication dependency and role checks, over
  :mod:`app.services.access.auth`.
- :mod:`~app.api.access.permissions`: the one declared table of route x minimum role.

May import :mod:`app.services.access`, :mod:`app.api.errors` and :mod:`app.api.schemas`;
routes and the app factory import it.
"""
