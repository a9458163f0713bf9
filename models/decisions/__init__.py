"""Costs and decisions: the rule of least expected cost, and what it needs.

``rule`` (the cost matrix ``C[i][j]``, the decision of least expected cost, thresholds and
class priors), ``actions`` (a ``(K, A)`` matrix of named actions, the action of least
expected cost), ``training_costs`` (checking and defaulting the cost matrices that cost-sensitive training
takes). Pure numpy/scipy over probabilities and costs; imports only exceptions.
"""
