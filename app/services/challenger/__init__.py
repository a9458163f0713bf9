"""Champion and challenger: shadow scoring, the comparison of two versions' realised cost,
and the promotion gate.

- :mod:`~app.services.challenger.comparison`: ``compare`` two versions of a model over
  labelled predictions of the log (paired on shadow pairs, else unpaired).
- :mod:`~app.services.challenger.promotion`: move an alias to a candidate only when a
  rule holds on that comparison; the evidence is kept with the move.
- :mod:`~app.services.challenger.shadow`: a model's shadow version decides every logged
  predict again, off the request path (a bounded queue that drops and counts).

May import :mod:`~app.services.prediction` (the shadow decides with the predictor's
models), :mod:`~app.services.feedback`, :mod:`~app.services.model_registry`,
:mod:`~app.services.decisions` and :mod:`~app.services.common`; no room imports it (the
predictor calls the shadow through a hook the wiring gives it).
"""
