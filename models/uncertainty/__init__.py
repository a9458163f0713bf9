"""How sure a decision is: an interval for each row's calibrated probability, and whether
the decision of least expected cost is the same at both of its ends.

``interval`` (:func:`~models.uncertainty.interval.probability_interval`: the spread of the
k cross-fitted fold boosters that a fold ensemble serves, each mapped by the version's one
calibration map) and ``stability`` (:func:`~models.uncertainty.stability.stable_decisions`:
the decision, among classes or actions, recomputed at both ends of the interval).

May import: inference (the served model and its fold boosters), decisions, exceptions.
Never training code.
"""
