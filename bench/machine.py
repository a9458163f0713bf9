"""Which machine a benchmark ran on: one ``machine()`` for every bench script."""

from __future__ import annotations

import os
import platform
import subprocess


def cpu_model() -> str:
    """The CPU model name from ``lscpu`` (``platform.processor()`` or ``platform.machine()``
    when lscpu is missing), or ``"unknown"``."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if line.strip().startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> str:
    """``"<CPU model>, <n> CPUs, <OS> <kernel>, Python <version>"``: what results record."""
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )
