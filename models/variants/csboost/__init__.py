"""Cost-sensitive boosting of Masnadi-Shirazi & Vasconcelos (2007) and AdaDB.

* :mod:`models.variants.csboost.cs_adaboost` -- CSAda / cost-sensitive AdaBoost (Algorithm 1,
  Eqs. 38-45), API name ``"csada"``;
* :mod:`models.variants.csboost.adadb` -- AdaDB (Landesa-Vazquez & Alba-Castro 2013), ``"adadb"``;
* :mod:`models.variants.csboost.cs_realboost` -- cost-sensitive RealBoost (Algorithm 2, Eq. 49),
  ``"cs_realboost"``;
* :mod:`models.variants.csboost.cs_logitboost` -- cost-sensitive LogitBoost (Algorithm 3,
  Eqs. 52-56), ``"cs_logitboost"``.

Shared pieces: :mod:`~models.variants.csboost._common` (cost mapping C1 = c_fn, C2 = c_fp, the
normalisation C1 + C2 = 2, the sgn[F] rule and its serving, the resolved sign of T),
:mod:`~models.variants.csboost._alpha` (solvers of Eq. 41), :mod:`~models.variants.csboost._histogram`
(histograms over the core's bins) and :mod:`~models.variants.csboost._real` (the loop for
real-valued stumps).
"""
