"""The paper variants: every binary booster other than calibrated AdaMEC itself.

* the cost-sensitive AdaBoost variants of Tables 1-2 of Nikolaou et al. (2016), one module
  each (table below);
* :mod:`models.variants.jous` and :mod:`models.variants.padaboost`: JOUS-Boost and
  P-AdaBoost of Mease, Wyner & Buja (2007) (JOUS-Boost's served scorer is
  :mod:`models.inference.jous_scorer`);
* :mod:`models.variants.csboost`: the cost-sensitive boosting of Masnadi-Shirazi &
  Vasconcelos (2007) and AdaDB of Landesa-Vazquez & Alba-Castro (2013).

Tables 1-2 of Nikolaou et al.:

Each variant is a short subclass of :class:`models.boosting.loop.BaseBoosting` overriding only
its hooks (initial weights, alpha, weight update); the catalog entries (``SPECS``) live
in the modules:

========================  ==================  =======================================
API name                  class               module
========================  ==================  =======================================
``cgada``                 :class:`CGAda`                :mod:`models.variants.cgada`
``asymmetric_adaboost``   :class:`AsymmetricAdaBoost`   :mod:`models.variants.cgada`
``asymada``               :class:`AsymAda`              :mod:`models.variants.asymada`
``adac1/adac2/adac3``     :class:`AdaC1` ...            :mod:`models.variants.adac`
``csb0/csb1/csb2``        :class:`CSB0` ...             :mod:`models.variants.csb`
``adacost``               :class:`AdaCost`              :mod:`models.variants.adacost`
``adacost_beta2``         :class:`AdaCostBeta2`         :mod:`models.variants.adacost`
========================  ==================  =======================================

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Tables 1-4.
"""

from models.variants.adac import AdaC1, AdaC2, AdaC3
from models.variants.adacost import AdaCost, AdaCostBeta2
from models.variants.asymada import AsymAda
from models.variants.cgada import AsymmetricAdaBoost, CGAda
from models.variants.csb import CSB0, CSB1, CSB2

__all__ = [
    "AdaC1",
    "AdaC2",
    "AdaC3",
    "AdaCost",
    "AdaCostBeta2",
    "AsymAda",
    "AsymmetricAdaBoost",
    "CGAda",
    "CSB0",
    "CSB1",
    "CSB2",
]
