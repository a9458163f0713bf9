"""Health of the service: is it ready to take requests.

- :mod:`~app.services.health.readiness`: does the database answer, is its schema at
  head, have the start-up checks (among them the auth configuration) passed.

May import :mod:`~app.services.access` (the auth configuration checked at start-up) and
nothing else of the services.
"""
