"""Request bodies: one declared path from the socket to a parsed value.

- :mod:`~app.api.bodies.limits`: each route declares its body once, as a dependency
  (byte limit while streaming, small bodies parsed on the loop, large ones in the worker).
- :mod:`~app.api.bodies.parsing`: the bodies routes parse themselves (one media-type
  check, one JSON parser, predict and evaluate inputs).
- :mod:`~app.api.bodies.scan`: what a JSON body holds counted without decoding it.
- :mod:`~app.api.bodies.parse_pool`: the separate process that parses large bodies, so
  the event loop never waits.

HTTP only: may import :mod:`app.api.schemas`, :mod:`app.api.guards` and the services'
input checks; routes import it, it imports no route.
"""
