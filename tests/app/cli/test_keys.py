"""``costwise keys`` and the production start refusal of ``costwise serve``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.settings import get_settings

ROOT = Path(__file__).resolve().parents[3]


def test_keys_create_list_revoke(registry: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "create", "--role", "admin", "--name", "ops"]) == 0
    out, err = capsys.readouterr()
    admin = out.strip()
    assert admin.startswith("cw_") and len(admin) == 46
    assert "only time the key is shown" in err and admin not in err
    assert main(["keys", "create", "--role", "reader", "--name", "dash"]) == 0
    reader = capsys.readouterr().out.strip()
    assert main(["keys", "list"]) == 0
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("id\tname\trole\tprefix")
    assert lines[1].split("\t")[:5] == ["1", "ops", "admin", admin[:8] + "...", "active"]
    assert admin not in out and reader not in out
    assert main(["keys", "revoke", "2"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["keys", "revoke", "1"]) == 2  # the last admin key
    assert "last active admin key" in capsys.readouterr().err
    assert main(["keys", "revoke", "1", "--force"]) == 0
    assert main(["keys", "list"]) == 0
    assert capsys.readouterr().out.count("\trevoked ") == 2
    assert main(["keys", "revoke", "99"]) == 2
    assert "NOT_FOUND" in capsys.readouterr().err


def test_keys_create_rejects_unknown_roles(registry: str) -> None:
    with pytest.raises(SystemExit):
        main(["keys", "create", "--role", "root", "--name", "x"])


def test_serve_refuses_prod_without_auth(
    registry: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COSTWISE_ENV", "prod")
    get_settings.cache_clear()
    assert main(["serve", "--no-migrate"]) == 2
    assert "COSTWISE_ENV=prod requires COSTWISE_AUTH=on" in capsys.readouterr().err
    monkeypatch.setenv("COSTWISE_AUTH", "on")
    get_settings.cache_clear()
    assert main(["serve", "--no-migrate"]) == 2
    assert "needs an active admin API key" in capsys.readouterr().err


def test_serve_exit_code_in_a_real_process(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "COSTWISE_DATABASE_URL": f"sqlite:///{tmp_path / 'r.db'}",
        "COSTWISE_ENV": "prod",
        "COSTWISE_AUTH": "on",
        "COSTWISE_BOOTSTRAP_ADMIN_KEY": "too-short",
    }
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "COSTWISE_BOOTSTRAP_ADMIN_KEY is too short" in result.stderr
    assert "too-short" not in result.stderr.replace("is too short", "")
