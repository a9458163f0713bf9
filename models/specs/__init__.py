"""The value types trainable things declare themselves with.

``algorithm``: :class:`~models.specs.algorithm.AlgorithmSpec` (an algorithm's API name,
paper, properties, parameters and ``build`` function) and
:class:`~models.specs.algorithm.ParamSpec` (a parameter's type, default and range). Every
estimator module declares a module-level ``SPEC`` with them; :mod:`models.catalog` gathers
the declarations. ``weak_learner``: :class:`~models.specs.weak_learner.WeakLearnerSpec`
(a weak learner family, registered in :mod:`models.weak`); ``layout``:
:class:`~models.specs.layout.EnsembleLayout` (how learners are stored and evaluated,
registered in :mod:`models.inference.layouts`); ``estimator_params``:
:func:`~models.specs.estimator_params.declared_init` (an estimator's ``__init__`` built
from declared runs of parameters and defaults). Imports only exceptions, so that any room
can declare itself.
"""
