"""The use cases of the service, one room (package) per concept; nothing lives flat here.

- :mod:`~app.services.prediction`: ``Predictor`` (predict, evaluate, V2 infer) and what
  a prediction says about where it came from.
- :mod:`~app.services.decisions`: a request's cost setting, the decision of a block of
  rows under it, and the metrics of those decisions (shared by prediction, batch,
  plots, training and recalibration).
- :mod:`~app.services.feedback`: the loop after a prediction: the prediction log, late
  outcomes, monitoring, class-prior estimates and recalibration.
- :mod:`~app.services.training`: train a calibrated model and register it.
- :mod:`~app.services.model_registry`: reading the registry, stored artifacts, the unit
  of work that registers a version.
- :mod:`~app.services.jobs`, :mod:`~app.services.batch`, :mod:`~app.services.plots`,
  :mod:`~app.services.datasets`: training jobs, batch decisions, diagnostic plots,
  datasets read by reference.
- :mod:`~app.services.access`: who is calling (API keys, roles) and key management.
- :mod:`~app.services.health`: readiness of the service.
- :mod:`~app.services.common`: the few helpers several rooms share (request inputs,
  core-error translation, slots, periodic upkeep).

Which room may import which is declared in ``pyproject.toml`` ([tool.importlinter],
checked by ``tests/test_import_contracts.py``); ``tests/test_architecture.py`` refuses a
module added flat at this level.
"""
