"""Run the walk-throughs of the README and docs/ as written, and compare what they show.

The markup (in the Markdown pages, invisible when rendered):

- every fenced ``bash`` or ``python`` block of a checked page is run, in page order,
  unless the line before its fence is ``<!-- doc-check: skip: <reason> -->``;
- in a ``bash`` block, a comment ``# -> ...`` (continued by the following ``#`` lines
  indented past the ``#``) is the expected output of the command just above it;
- a fenced block after ``<!-- doc-check: output -->`` is the expected output of what ran
  last: the last command of the previous ``bash`` block, or the whole standard output
  of the previous ``python`` block.

An expected output is a pattern: ``...`` stands for any text, a number stands for any
number that rounds to it at the decimals it is written with (``0.872`` matches
``0.8718370383845909``, ``1`` matches only 1), whitespace is not significant next to
``{}[]:,`` and any other run of whitespace is one space. The rest must be equal, from
the first character of the output to the last.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

MARK = re.compile(r"^<!--\s*doc-check:\s*(run|skip|output)\s*(?::\s*(.*?))?\s*-->$")
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")
RUNNABLE = {"bash", "sh", "shell", "python"}


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    mark: str | None  # "skip", "output" or None (run)
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path, root: Path) -> list[Block]:
    """The fenced blocks of ``path`` with the doc-check mark on the line before each."""
    lines = path.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        prev = i - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        mark = MARK.match(lines[prev].strip()) if prev >= 0 else None
        out.append(
            Block(
                page=str(path.relative_to(root)),
                line=i + 1,
                lang=lang,
                text="\n".join(lines[i + 1 : j]),
                mark=None if mark is None or mark.group(1) == "run" else mark.group(1),
                reason=(mark.group(2) or "") if mark else "",
            )
        )
        i = j + 1
    return out


@dataclass
class Command:
    text: str
    expected: list[str] = field(default_factory=list)  # the "# ->" lines, without "#"


def commands(shell: str) -> list[Command]:
    """Split a shell block into commands (a command ends where its quotes close and no
    backslash continues it) and attach each ``# ->`` expectation to the command above."""
    out: list[Command] = []
    buffer: list[str] = []
    expecting = False
    for line in shell.splitlines():
        stripped = line.strip()
        if not buffer and stripped.startswith("#"):
            body = stripped[1:]
            if body.lstrip().startswith("->"):
                if not out:
                    raise ValueError(f"an expected output before any command: {line!r}")
                out[-1].expected.append(body.lstrip()[2:])
                expecting = True
            elif expecting and body.startswith("  "):
                out[-1].expected.append(body)
            else:
                expecting = False
            continue
        if not buffer and not stripped:
            expecting = False
            continue
        expecting = False
        buffer.append(line)
        text = "\n".join(buffer)
        if text.endswith("\\"):
            continue
        try:
            shlex.split(text, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        out.append(Command(text))
        buffer = []
    if buffer:
        raise ValueError(f"an unfinished command: {buffer!r}")
    return out


# --- expected output as a pattern --------------------------------------------------

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
EXPECTED_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def normalise(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r" ?([{}\[\]:,]) ?", r"\1", text)


def _tokens(expected: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    for k, part in enumerate(normalise(expected).split("...")):
        if k:
            tokens.append(("any", ""))
        pos = 0
        for m in EXPECTED_NUMBER.finditer(part):
            if m.start() > pos:
                tokens.append(("text", part[pos : m.start()]))
            tokens.append(("number", m.group()))
            pos = m.end()
        if pos < len(part):
            tokens.append(("text", part[pos:]))
    return tokens


def _rounds_to(actual: str, expected: str) -> bool:
    decimals = len(expected.split(".", 1)[1]) if "." in expected else 0
    return abs(float(actual) - float(expected)) <= 0.5 * 10.0**-decimals + 1e-12


def matches(expected: str, actual: str) -> bool:
    """``actual`` (the whole output) fits the pattern ``expected`` (see the module doc)."""
    tokens = _tokens(expected)
    text = normalise(actual)

    @cache
    def fit(t: int, pos: int) -> bool:
        if t == len(tokens):
            return pos == len(text)
        kind, value = tokens[t]
        if kind == "text":
            return text.startswith(value, pos) and fit(t + 1, pos + len(value))
        if kind == "number":
            m = NUMBER.match(text, pos)
            return bool(m) and _rounds_to(m.group(), value) and fit(t + 1, m.end())
        # "any": try every place the next token can start
        if t + 1 == len(tokens):
            return True
        nkind, nvalue = tokens[t + 1]
        if nkind == "text":
            at = text.find(nvalue, pos)
            while at != -1:
                if fit(t + 1, at):
                    return True
                at = text.find(nvalue, at + 1)
            return False
        return any(fit(t + 1, p) for p in range(pos, len(text) + 1))

    return fit(0, 0)


# --- running ---------------------------------------------------------------------


def error_body(output: str) -> bool:
    """An API error document (what ``curl -s`` prints on a 4xx/5xx)."""
    try:
        doc = json.loads(output)
    except ValueError:
        return False
    return isinstance(doc, dict) and {"code", "detail"} <= doc.keys() and "model" not in doc


class Shell:
    """One bash process per page, so that variables set in one block reach the next."""

    END = "<<<doc-check-end>>>"

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.stderr_path = cwd / ".doc-check-stderr"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen(
            ["bash", "--norc", "--noprofile"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )

    def run(self, command: str) -> tuple[int, str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{command}\nprintf '\\n%s %d\\n' '{self.END}' $?\n")
        self.process.stdin.flush()
        lines: list[str] = []
        for line in self.process.stdout:
            if line.startswith(self.END):
                return int(line.split()[1]), "".join(lines)[:-1]  # the newline printf added
            lines.append(line)
        raise RuntimeError(f"the shell ended while running {command!r}")

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text()[-3000:]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()


def environment(root: Path) -> dict[str, str]:
    """The environment the README tells the reader to enter (``. .venv/bin/activate``):
    the interpreter's bin directory first on PATH, this checkout importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(
        [str(root)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("COSTWISE_URL", None)
    env.pop("COSTWISE_API_KEY", None)
    return env
