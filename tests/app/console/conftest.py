"""Browser-test fixtures: the real app on a free port, and Debian's headless Chromium.

Selenium drives Chromium through Debian's ``chromium-driver``, which is built from the
same source and version as the ``chromium`` package, so driver and browser always match
(Playwright's Python package pins its own browser build and protocol version and wants
to download that build; here nothing is downloaded). The service is started in a thread
with uvicorn on a socket bound to port 0 (no port race), on the test's fresh registry.
There is no skip: without Chromium the browser tests fail and say how to install it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from app.api.main import create_app
from app.settings import Settings

CHROMIUM = Path(os.environ.get("COSTWISE_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("COSTWISE_CHROMEDRIVER", "/usr/bin/chromedriver"))
INSTALL_HINT = (
    "The web-console tests need Debian's Chromium and its driver: as root run "
    "`apt-get update && apt-get install -y chromium chromium-driver` "
    "(scripts/test.sh does this itself when it runs as root), or point "
    "COSTWISE_CHROMIUM / COSTWISE_CHROMEDRIVER at a matching browser and driver."
)
WAIT_SECONDS = 15


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    """One headless Chromium for the session (1280x800), closed at the end."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found. {INSTALL_HINT}", pytrace=False)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,800",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    # --window-size counts the (invisible) browser frame: make the page itself 1280x800
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def serve(settings: Settings) -> Iterator[str]:
    """Run the app for ``settings`` with uvicorn in a thread; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(settings), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_SECONDS
    while not server.started:  # uvicorn has no start event to wait on
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the app did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(WAIT_SECONDS)
        sock.close()


def wait_for(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    """Wait until ``condition(driver)`` is truthy (and return it), or fail saying ``what``."""
    return WebDriverWait(
        driver,
        WAIT_SECONDS,
        poll_frequency=0.05,
        # the page re-renders tables as answers arrive: an element read mid-render is retried
        ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
    ).until(condition, f"timed out waiting for {what}")


def api_client(base_url: str, key: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=base_url, headers=headers, timeout=30)
