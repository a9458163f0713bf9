"""The feedback loop's numerics: what a served model's traffic says about it.

``monitoring`` (calibration tests and cost summaries over labelled traffic), ``actions``
(realised cost of logged decisions among named actions, figures per action), ``priors``
(deployment class priors estimated from unlabelled predictions: label shift),
``recalibration`` (a new calibration map over a served model's scores, without
retraining). The service's room of the same name (``app.services.feedback``) stores the
log and outcomes these read. May import: inference, calibration, evaluation, decisions,
exceptions; never training code.
"""
