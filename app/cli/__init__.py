"""The ``costwise`` command line (console script ``costwise = app.cli:main``).

``main`` parses the sub-commands (:mod:`app.cli.main`); each group of sub-commands has
its own module: :mod:`app.cli.keys`, :mod:`app.cli.predict`, :mod:`app.cli.remote`
(``--url``: talk to a running server), :mod:`app.cli.worker`, and
:mod:`app.cli.progress` (progress bars).
"""

from app.cli.main import main

__all__ = ["main"]
