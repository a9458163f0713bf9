"""Prediction: cost-sensitive decisions from registered versions, one door for every transport.

- :mod:`~app.services.prediction.request`: ``DecisionRequest``, the one request value
  every door builds (rows, costs and priors, version or alias, ids, labels), and its
  ``CostRequest``, which batch decisions build per block of rows too.
- :mod:`~app.services.prediction.predictor`: ``Predictor``, the use case behind ``/v1``
  predict and evaluate, ``/v2`` infer, the CLI and batch scoring (resolve a version,
  decide, log).
- :mod:`~app.services.prediction.provenance`: where a prediction came from (model,
  version, alias, calibration, rule, costs).
- :mod:`~app.services.prediction.model_info`: what a served model looks like from
  outside (the facts behind V2 model metadata).
- :mod:`~app.services.prediction.explanations`: ``explain: true``, each row's
  per-feature attribution of its score, probability and expected-cost margin.

May import :mod:`~app.services.decisions`, :mod:`~app.services.feedback` (the log writer
it hands entries to, the prior estimates it applies), :mod:`~app.services.model_registry`
and :mod:`~app.services.common`; never training, batch or jobs.
"""
