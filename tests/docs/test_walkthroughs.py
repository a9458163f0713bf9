"""The first steps work as written: the README's walk-through, the Python client page and
the monitoring and recalibration walk-throughs are run block by block against a real
``costwise serve`` (a subprocess on a free port, a fresh SQLite registry) and what they
print is compared with what the pages show. The markup is described in
``tests/docs/walkthrough.py``; ``test_every_runnable_block_is_run_or_skipped_with_a_reason``
keeps the list of skipped blocks short and explained."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.docs.walkthrough import (
    RUNNABLE,
    Block,
    Shell,
    blocks,
    commands,
    environment,
    error_body,
    matches,
)

ROOT = Path(__file__).resolve().parents[2]

# The one place the documented address is declared: every block is run with it replaced
# by the test server's.
DOCUMENTED_URL = "http://127.0.0.1:8000"

# Pages run in order against one fresh server: the monitoring and recalibration pages
# continue the README's walk-through (model "fraud", alias production -> version 1);
# the client page starts on a fresh registry, as it says.
WALKS = {
    "readme-monitoring-recalibration": ["README.md", "docs/monitoring.md", "docs/recalibration.md"],
    "client": ["docs/client.md"],
    "actions": ["docs/actions.md"],
}

# Walks on the shared data sets (../shared/datasets from the repository root, or
# $COSTWISE_DATASETS_DIR): the files they read. Without them the walk is skipped (the
# project's tests pass without the shared data sets); with them it runs as written.
DATASETS_DIR = Path(os.environ.get("COSTWISE_DATASETS_DIR") or ROOT.parent / "shared" / "datasets")
NEEDS_DATASETS = {"actions": ["german.csv"]}

# Blocks that cannot run in a test, by page: how many the pages may mark skip.
MAX_SKIPPED = {
    "README.md": 3,
    "docs/client.md": 1,
    "docs/monitoring.md": 0,
    "docs/recalibration.md": 2,
    "docs/actions.md": 0,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def costwise_serve(workdir: Path, env: dict[str, str]) -> Iterator[str]:
    """``costwise serve`` on a free port with a fresh SQLite registry; yields its URL."""
    port = _free_port()
    env = {**env, "COSTWISE_DATABASE_URL": f"sqlite:///{workdir / 'registry.db'}"}
    log = (workdir / "serve.log").open("w")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "costwise"), "serve", "--port", str(port)],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError("costwise serve exited:\n" + (workdir / "serve.log").read_text())
            try:
                if httpx.get(f"{url}/health/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("costwise serve was not ready in 90 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _workdir(tmp_path: Path) -> Path:
    """Where the reader stands: a directory with the repository's ``examples/``."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


def _check(block: Block, what: str, expected: str, actual: str) -> None:
    assert matches(expected, actual), (
        f"{block.where}: the output of {what!r} is not what the page shows\n"
        f"--- shown:\n{expected.strip()}\n--- got:\n{actual.strip()[:4000]}"
    )


def _walk(pages: list[str], tmp_path: Path) -> int:
    """Run the pages' blocks in order; returns how many commands and programs ran."""
    workdir = _workdir(tmp_path)
    env = {**environment(ROOT), "COSTWISE_DATASETS_DIR": str(DATASETS_DIR)}
    ran = 0
    with costwise_serve(workdir, env) as url, (workdir / "transcript.txt").open("w") as transcript:
        # every output, in order: what to paste into a page after a deliberate change
        transcript.reconfigure(line_buffering=True)
        shell = Shell(workdir, env)
        try:
            last: tuple[Block, str, str] | None = None  # (block, what, its output)
            for page in pages:
                for block in blocks(ROOT / page, ROOT):
                    if block.mark == "output":
                        assert last is not None, f"{block.where}: an output before any block ran"
                        _check(last[0], last[1], block.text, last[2])
                        last = None
                        continue
                    if block.lang not in RUNNABLE or block.mark == "skip":
                        continue
                    text = block.text.replace(DOCUMENTED_URL, url)
                    if block.lang == "python":
                        done = subprocess.run(
                            [sys.executable, "-c", text],
                            cwd=workdir,
                            env=env,
                            capture_output=True,
                            text=True,
                            timeout=300,
                        )
                        assert done.returncode == 0, (
                            f"{block.where}: exit {done.returncode}\n{done.stderr[-3000:]}"
                        )
                        transcript.write(f"### {block.where}\n{done.stdout}\n")
                        last = (block, "the python block", done.stdout)
                        ran += 1
                        continue
                    for command in commands(text):
                        status, output = shell.run(command.text)
                        transcript.write(f"### {block.where}\n$ {command.text}\n{output}\n")
                        assert status == 0, (
                            f"{block.where}: exit {status} from {command.text!r}\n{output}\n{shell.stderr()}"
                        )
                        if command.expected:
                            _check(block, command.text, "\n".join(command.expected), output)
                        else:
                            assert not error_body(output), (
                                f"{block.where}: {command.text!r} -> {output}"
                            )
                        last = (block, command.text, output)
                        ran += 1
        finally:
            shell.close()
    return ran


@pytest.mark.parametrize("walk", sorted(WALKS))
def test_walkthrough_runs_as_written(walk: str, tmp_path: Path) -> None:
    missing = [f for f in NEEDS_DATASETS.get(walk, []) if not (DATASETS_DIR / f).exists()]
    if missing:
        pytest.skip(f"needs the shared data sets {missing} in {DATASETS_DIR}")
    assert _walk(WALKS[walk], tmp_path) >= len(WALKS[walk])


def test_every_runnable_block_is_run_or_skipped_with_a_reason() -> None:
    for page, most in MAX_SKIPPED.items():
        page_blocks = blocks(ROOT / page, ROOT)
        skipped = [b for b in page_blocks if b.mark == "skip"]
        assert all(b.reason for b in skipped), [b.where for b in skipped if not b.reason]
        assert len(skipped) <= most, [f"{b.where}: {b.reason}" for b in skipped]
        assert any(b.lang in RUNNABLE and b.mark is None for b in page_blocks), page
        for b in page_blocks:  # every output block follows something that runs
            if b.mark == "output":
                before = [x for x in page_blocks if x.line < b.line and x.mark != "output"]
                assert before and before[-1].lang in RUNNABLE and before[-1].mark is None, b.where


def test_the_pattern_fails_on_a_changed_output() -> None:
    shown = '{"model": "fraud", "version": 1, ..., "auc": 0.872, ...}'
    assert matches(shown, '{"model":"fraud","version":1,"x":2,"auc":0.8718370383845909,"y":[1]}')
    assert not matches(shown, '{"model":"fraud","version":1,"auc":0.8731,"y":1}')  # 0.873
    assert not matches(shown, '{"model":"fraud","version":2,"auc":0.872}')
    assert not matches(shown, '{"model":"fraud","version":1.5,"auc":0.872}')
    assert not matches("2 0 0.3333 0.3142", "2 0 0.3333 0.3142 extra")  # the whole output
    assert matches("2 0 0.3333\n420 1 0.0024", "2  0 0.33333\n420 1 0.00238")
    assert not matches("1 0.0024", "1 0.0026")


def test_shell_blocks_split_into_commands_with_their_expected_output() -> None:
    block = (
        'R=\'{"a": 1,\n    "b": 2}\'   # one row\n'
        "# 1. a comment\n"
        'curl -s -X POST http://x/v1 \\\n  -d "{\\"r\\": [$R]}"\n'
        '# -> {"model": "m",\n#     "n": 2}\n'
        "echo done  # inline\n"
    )
    cmds = commands(block)
    assert [c.text.split()[0] for c in cmds] == ['R=\'{"a":', "curl", "echo"]
    assert cmds[1].expected == [' {"model": "m",', '     "n": 2}']
    assert cmds[0].expected == [] and cmds[2].expected == []
