"""The feedback loop: what happens to predictions after they are served.

- :mod:`~app.services.feedback.prediction_log`: the prediction log writer (batched
  inserts off the request path, bounded memory) and its ``LogEntry``.
- :mod:`~app.services.feedback.outcomes`: late outcomes (true labels, realised costs) of
  logged predictions.
- :mod:`~app.services.feedback.monitoring`: how a deployed model is doing, per version
  and time bucket, from its log.
- :mod:`~app.services.feedback.log_maintenance`: background upkeep of the log (retention
  delete, the monitoring snapshot).
- :mod:`~app.services.feedback.priors`: deployment class priors estimated from the log.
- :mod:`~app.services.feedback.recalibration`: recalibrate a version on its labelled log
  rows, registering a new version.

May import :mod:`~app.services.decisions`, :mod:`~app.services.model_registry`,
:mod:`~app.services.plots` (a recalibrated version's plot data) and
:mod:`~app.services.common`; never prediction (which imports this room to log), training,
batch or jobs.
"""
