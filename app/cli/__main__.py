"""``python -m app.cli``: the same as the ``costwise`` console script."""

import sys

from app.cli.main import main

sys.exit(main())
