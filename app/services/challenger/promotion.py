"""Use case: the promotion gate. Move an alias to a candidate only when the evidence holds.

The alias's current version is the champion ``a``, the candidate ``b``; the gate runs
:meth:`app.services.challenger.comparison.Comparison.compare` over the window and checks
the rule:

- ``min_labelled_pairs``: at least that many labelled rows behind the interval (shadow
  pairs; unpaired, the smaller of the two versions' counts);
- ``max_cost_difference``: the upper end of the interval of ``mean(cost_b - cost_a)``
  is below this bound (default 0: the candidate is cheaper with the rule's confidence);
- ``max_ece_increase``: the candidate's ECE is at most this much above the champion's.

When every check holds the alias moves, and the rule, each check and the comparison are
kept with the move in the audit trail (``reason = "promoted"``); otherwise 409
``PROMOTION_REFUSED`` with the same figures and nothing moves. Between the comparison
and the move the alias must not have moved (else 409 ``CONFLICT``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, PromotionRefused
from app.registry.log_window import EVERYTHING, LogWindow
from app.registry.repository import reading
from app.services.challenger.comparison import Comparison
from app.services.model_registry.service import Actor, ModelRegistry

__all__ = ["PromotionRule", "Promoter"]


@dataclass(frozen=True)
class PromotionRule:
    """What the evidence must show for the candidate to replace the alias's version."""

    min_labelled_pairs: int = 200
    max_cost_difference: float = 0.0
    max_ece_increase: float = 0.02
    confidence: float = 0.95
    mode: str = "auto"


def _checks(rule: PromotionRule, report: dict[str, Any]) -> list[dict[str, Any]]:
    diff = report.get("cost_difference")
    if report["mode"] == "paired":
        n = int(report["labelled_pairs"])
    else:
        n = min(report["labelled"]["a"], report["labelled"]["b"])
    high = None if diff is None else diff["high"]
    ece_a = report["versions"]["a"]["ece"]
    ece_b = report["versions"]["b"]["ece"]
    worsening = None if ece_a is None or ece_b is None else ece_b - ece_a
    return [
        {
            "check": "min_labelled_pairs",
            "required": rule.min_labelled_pairs,
            "observed": n,
            "passed": n >= rule.min_labelled_pairs,
        },
        {
            "check": "max_cost_difference",
            "required": f"upper end of the {rule.confidence:.0%} interval < "
            f"{rule.max_cost_difference}",
            "observed": high,
            "passed": high is not None and high < rule.max_cost_difference,
        },
        {
            "check": "max_ece_increase",
            "required": rule.max_ece_increase,
            "observed": worsening,
            "passed": worsening is not None and worsening <= rule.max_ece_increase,
        },
    ]


class Promoter:
    """Moves an alias to a candidate when the rule holds on the comparison."""

    def __init__(
        self,
        comparison: Comparison,
        registry: ModelRegistry,
        read_sessions: sessionmaker[Session],
    ) -> None:
        self._read = read_sessions
        self.comparison = comparison
        self.registry = registry

    def promote(
        self,
        name: str,
        alias: str,
        candidate: str,
        rule: PromotionRule,
        actor: Actor,
        window: LogWindow = EVERYTHING,
        *,
        note: str = "",
    ) -> dict[str, Any]:
        """Compare the alias's version with ``candidate`` over ``window``; move the alias
        if the rule holds (returns the move and its evidence), else raise PromotionRefused."""
        with reading(self._read) as reg:
            current = reg.get_alias(name, alias).model_version.version
            target, _ = Comparison.version_of(reg, name, candidate, "candidate")
        if target == current:
            raise InvalidArgument(
                f"candidate: alias {alias!r} already points at version {target}",
                field="candidate",
            )
        report = self.comparison.compare(
            name,
            str(current),
            str(target),
            window,
            mode=rule.mode,
            confidence=rule.confidence,
            require_labels=False,
        )
        checks = _checks(rule, report)
        evidence = {"rule": asdict(rule), "checks": checks, "comparison": report}
        failed = [c for c in checks if not c["passed"]]
        if failed:
            figures = "; ".join(
                f"{c['check']}: observed {c['observed']}, required {c['required']}" for c in failed
            )
            raise PromotionRefused(
                f"candidate: version {target} was not promoted to {alias!r} (version "
                f"{current} stays): {figures}",
                field="candidate",
                evidence=evidence,
            )
        self.registry.set_alias(
            name,
            alias,
            target,
            actor,
            note=note,
            reason="promoted",
            evidence=evidence,
            expected_from=current,
        )
        return {
            "model": name,
            "alias": alias,
            "from_version": current,
            "to_version": target,
            "evidence": evidence,
        }
