"""The ensemble layouts: how weak learners are stored as flat arrays, one module each.

Every layout is declared once, as an :class:`~models.specs.layout.EnsembleLayout`
(arrays, checks, evaluation), and kept in :data:`ENSEMBLE_LAYOUTS`; an
:class:`~models.inference.ensemble.Ensemble` of kind ``k``, and every artifact naming
``ensemble_kind: k``, is evaluated, saved and loaded through ``ENSEMBLE_LAYOUTS[k]``:

* ``"stumps"`` (:mod:`~models.inference.layouts.stumps`) -- a threshold test per learner;
* ``"trees"`` (:mod:`~models.inference.layouts.trees`) -- depth-limited trees;
* ``"linear"`` (:mod:`~models.inference.layouts.linear`) -- ``a x[j] + b`` per learner;
* ``"oblique"`` (:mod:`~models.inference.layouts.oblique`) -- ``R`` linear functions of
  all features per learner, the largest answering.

A layout is readable because it is registered: the built-ins here, and whatever a
program registers with :func:`register_layout` before it loads an artifact naming it.
Nothing named in an artifact is ever imported.
"""

from __future__ import annotations

from models.exceptions import ArtifactError
from models.inference.layouts import linear, oblique, stumps, trees
from models.specs.layout import EnsembleLayout

__all__ = ["ENSEMBLE_LAYOUTS", "get_layout", "register_layout"]

#: Layout name -> declaration (the built-ins, then any registered by a program).
ENSEMBLE_LAYOUTS: dict[str, EnsembleLayout] = {}


def register_layout(layout: EnsembleLayout) -> EnsembleLayout:
    """Add ``layout`` to :data:`ENSEMBLE_LAYOUTS`; a name is registered once.

    Raises
    ------
    ValueError
        A layout of that name is already registered.
    """
    if layout.name in ENSEMBLE_LAYOUTS:
        raise ValueError(f"ensemble layout {layout.name!r} is already registered")
    ENSEMBLE_LAYOUTS[layout.name] = layout
    return layout


def get_layout(name: object) -> EnsembleLayout:
    """The layout called ``name``; :class:`ArtifactError` listing the known ones otherwise."""
    found = ENSEMBLE_LAYOUTS.get(name) if isinstance(name, str) else None
    if found is None:
        raise ArtifactError(f"kind must be one of {sorted(ENSEMBLE_LAYOUTS)}, got {name!r}")
    return found


for _module in (stumps, trees, linear, oblique):
    register_layout(_module.LAYOUT)
