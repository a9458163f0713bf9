"""costwise service: registry, training and cost-sensitive prediction over HTTP."""

__version__ = "0.1.0"
