"""The model registry as the services see it: versions, aliases, stored artifacts.

- :mod:`~app.services.model_registry.service`: ``ModelRegistry``, reading the registry
  and moving aliases, as views the API renders directly (``VersionView``).
- :mod:`~app.services.model_registry.stored_models`: loading a version's stored artifact
  (with the base artifact it shares arrays with).
- :mod:`~app.services.model_registry.registration`: the unit of work that registers a
  version (row, artifact and plots, all or nothing).
- :mod:`~app.services.model_registry.known_models`: the registered model names kept in
  memory for the metrics' ``model`` label.

May import :mod:`~app.services.plots` (the plot rows stored at registration) and
:mod:`~app.services.common`; the rooms that train, predict or recalibrate import it.
"""
