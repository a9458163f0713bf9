"""Print the algorithm table of docs/algorithms.md from the catalog (models.catalog.algorithms).

python scripts/algorithms_table.py            # print the table
python scripts/algorithms_table.py --check    # exit 1 if docs/algorithms.md is out of date
"""

from __future__ import annotations

import doc_tables  # scripts/doc_tables.py (run as python scripts/...)

from models.catalog.algorithms import algorithms

PIPE = "\\|"  # a literal | inside a markdown table cell


def _yes(flag: bool | None) -> str:
    return "" if flag is None else ("yes" if flag else "no")


SERVED = " Served uncalibrated"  # where a spec's rule text turns to how it is served


def _split_rule(rule: str) -> tuple[str, str | None]:
    """``(the rule of the paper, how a version is served)``; the second part is shared
    by whole families of algorithms, so the table says it once and refers to it."""
    if SERVED in rule:
        head, tail = rule.split(SERVED, 1)
        return head.strip(), SERVED.strip() + tail
    return rule, None


def table() -> str:
    lines = [
        "| algorithm | family | source | trains with costs | calibrated probabilities | own params | decision rule; request costs | FGD-consistent | cost-consistent | asymmetry-preserving |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    serving: list[str] = []
    for spec in algorithms().values():
        props = spec.properties or {}
        params = ", ".join(p.name for p in spec.params) or "-"
        head, served = _split_rule(spec.decision_rule)
        rule = head.replace("|", PIPE)
        if served is not None:
            if served not in serving:
                serving.append(served)
            n = serving.index(served) + 1
            rule += f" Serving: [S{n}](#s{n})."
        source = spec.source.replace("|", PIPE)
        lines.append(
            f"| `{spec.name}` ({spec.title}) | {spec.family} | {source} "
            f"| {_yes(spec.trains_with_costs)} | {_yes(spec.calibrated_probabilities)} "
            f"| {params} | {rule} "
            f"| {_yes(props.get('fgd_consistent'))} | {_yes(props.get('cost_consistent'))} "
            f"| {_yes(props.get('asymmetry_preserving'))} |"
        )
    if serving:
        lines += [
            "",
            "How the models trained with costs are served (referred to in the table):",
            "",
        ]
        lines += [f'- <a id="s{n}"></a>**S{n}.** {text}' for n, text in enumerate(serving, 1)]
    return "\n".join(lines)


def main() -> int:
    return doc_tables.main("algorithms.md", "algorithms", table(), "algorithms_table.py")


if __name__ == "__main__":
    raise SystemExit(main())
