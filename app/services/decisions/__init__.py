"""Decisions under costs: what a request's costs decide and how good the decisions are.

- :mod:`~app.services.decisions.request_costs`: a request's cost settings turned into
  the arrays :func:`models.decisions.rule.decide` takes.
- :mod:`~app.services.decisions.action_costs`: cost settings among named actions (a
  ``(K, A)`` matrix, ``c_review``), checked for
  :func:`models.decisions.actions.decide_actions`.
- :mod:`~app.services.decisions.row_decisions`: the decision of a block of rows under a
  cost setting (what predict does, shared with batch scoring).
- :mod:`~app.services.decisions.evaluation`: metrics, held-out ones recorded with every
  version and those of an evaluate request.

Shared by prediction, batch, plots, training and recalibration, so it may import only
:mod:`~app.services.common` (and the numerical core).
"""
