"""Every benchmark by name: ``python -m bench`` lists them, ``python -m bench NAME ARGS...`` runs one.

A benchmark is a module of a group package of ``bench/`` (``training``, ``serving``,
``quality``, ``reliability``, ``papers``) that runs as a program (it ends with
``if __name__ == "__main__":``); its name is ``<group>.<module>`` and its description the
first paragraph of its docstring. Nothing else declares them: a new module in a group is
listed and runnable as it is.

    python -m bench                            # every benchmark, one line each
    python -m bench serving                    # the serving group only
    python -m bench serving.service --quick    # run one; the arguments are its own
    python -m bench serving.service --help     # its options

Results go to ``bench/results/<group>/<name>.json`` (and ``.md``), see :mod:`bench.record`.
"""

from __future__ import annotations

import ast
import difflib
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Benchmark:
    name: str  # "<group>.<module>"
    path: Path
    description: str

    @property
    def module(self) -> str:
        return f"bench.{self.name}"


def _runs_as_program(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == (
            '__name__ == "__main__"'
        ):
            return True
    return False


def _description(tree: ast.Module) -> str:
    doc = ast.get_docstring(tree) or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def groups() -> list[str]:
    """The group packages of ``bench/``, in order of name."""
    return sorted(p.parent.name for p in BENCH_DIR.glob("*/__init__.py"))


def benchmarks() -> list[Benchmark]:
    """Every benchmark, by group then name (read from the sources, nothing imported)."""
    found = []
    for group in groups():
        for path in sorted((BENCH_DIR / group).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            if path.stem != "__init__" and _runs_as_program(tree):
                found.append(Benchmark(f"{group}.{path.stem}", path, _description(tree)))
    return found


def find(name: str, known: list[Benchmark]) -> Benchmark:
    """The benchmark called ``name`` (``group.module``, or ``module`` where that is unique)."""
    exact = [b for b in known if b.name == name]
    short = [b for b in known if b.name.split(".", 1)[1] == name]
    if exact or len(short) == 1:
        return (exact or short)[0]
    by_name = {b.name: b.name for b in known} | {b.name.split(".", 1)[1]: b.name for b in known}
    close = difflib.get_close_matches(name, list(by_name), n=3)
    hint = [b.name for b in short] or sorted({by_name[c] for c in close})
    raise SystemExit(
        f"no benchmark {name!r}"
        + (f"; did you mean {', '.join(hint)}?" if hint else "")
        + " (python -m bench lists them)"
    )


def listing(known: list[Benchmark], group: str | None = None) -> str:
    shown = [b for b in known if group is None or b.name.startswith(group + ".")]
    width = max(len(b.name) for b in shown)
    return "\n".join(f"{b.name:<{width}}  {b.description}" for b in shown)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    known = benchmarks()
    if not args or args[0] in ("-h", "--help", "--list"):
        print(__doc__.split("\n\n")[0] + "\n")
        print(listing(known))
        return 0
    if args[0] in groups():
        print(listing(known, args[0]))
        return 0
    bench = find(args[0], known)
    sys.argv = [str(bench.path), *args[1:]]
    runpy.run_module(bench.module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
