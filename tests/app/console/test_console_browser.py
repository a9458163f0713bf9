"""The web console in a real headless Chromium, checked number by number against the API.

Each test starts the real app on a free port with a fresh registry (SQLite, and
PostgreSQL when ``COSTWISE_TEST_DATABASE_URL`` is set), registers models through the
API, then clicks through ``/console`` like a user would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select

from app.settings import Settings
from tests.app.api.conftest import train_body
from tests.app.console.conftest import api_client, serve, wait_for

ADMIN_KEY = "cw_console_test_admin_key_0123456789"
SET_SLIDER = "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));"
# Wrap fetch: the request whose URL contains arguments[0] is answered only on release(),
# and its abort signal is ignored, as if the answer had already been on its way.
DELAY_FETCH = """
const match = arguments[0];
const original = window.fetch;
let release;
const gate = new Promise((resolve) => { release = resolve; });
window.__held = { seen: false, done: false, release };
window.fetch = async (url, options = {}) => {
  if (!String(url).includes(match)) return original(url, options);
  window.__held.seen = true;
  const response = await original(url, { ...options, signal: undefined });
  const body = await response.text();
  await gate;
  const late = new Response(body, { status: response.status, headers: response.headers });
  // done: after the page's own continuation (microtasks) has handled the answer
  late.json = async () => {
    setTimeout(() => { window.__held.done = true; }, 0);
    return JSON.parse(body);
  };
  return late;
};
"""
METRIC_DIGITS = {"brier": 4, "auc": 4, "accuracy": 4, "training_seconds": 2}


def _settings(database_url: str, **extra: Any) -> Settings:
    return Settings(database_url=database_url, max_train_rows=5000, max_rounds=500, **extra)


def _register(api: httpx.Client, name: str, **params: Any) -> dict[str, Any]:
    r = api.post(f"/v1/models/{name}/versions", json=train_body(**params))
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def live(database_url: str) -> Iterator[tuple[str, httpx.Client]]:
    """The app (auth off) with model 'fraud' (v1, v2) and 'nohold' (no held-out rows)."""
    with serve(_settings(database_url)) as url, api_client(url) as api:
        _register(api, "fraud", n_estimators=30)
        _register(api, "fraud", n_estimators=8, calibration="isotonic")
        _register(api, "nohold", n_estimators=5, evaluation_fraction=0)
        yield url, api


def by_id(driver: WebDriver, element_id: str) -> WebElement:
    return driver.find_element(By.ID, element_id)


def state_of(driver: WebDriver, element_id: str) -> str | None:
    return by_id(driver, element_id).get_attribute("data-state")


def value_of(element: WebElement) -> float:
    value = element.get_attribute("data-value")
    assert value is not None, element.get_attribute("id")
    return float(value)


def settled(driver: WebDriver, panel: str, error_id: str) -> None:
    """Wait until ``panel`` has loaded; fail with the message it shows if it failed."""
    wait_for(driver, lambda d: state_of(d, panel) in ("ready", "error"), panel)
    assert state_of(driver, panel) == "ready", by_id(driver, error_id).text


def open_console(driver: WebDriver, url: str) -> None:
    driver.get(f"{url}/console")
    wait_for(driver, lambda d: state_of(d, "models-panel") in ("ready", "error"), "models")


@pytest.fixture
def api(browser: WebDriver, live: tuple[str, httpx.Client]) -> httpx.Client:
    """The console of :func:`live` open in ``browser`` (models loaded); the API's client."""
    url, client = live
    open_console(browser, url)
    return client


def use_key(driver: WebDriver, key: str) -> None:
    """Type ``key`` in the API-key field, use it, and wait for the models to reload."""
    field = by_id(driver, "api-key")
    field.clear()
    field.send_keys(key)
    by_id(driver, "save-key").click()  # reloads the models synchronously: state "loading"
    wait_for(driver, lambda d: state_of(d, "models-panel") in ("ready", "error"), "models")


def click_model(driver: WebDriver, name: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f'#models button[data-model="{name}"]').click()
    wait_for(driver, lambda d: state_of(d, "versions-panel") in ("ready", "error"), "versions")


def click_version(driver: WebDriver, version: int) -> None:
    by_id(driver, "versions").find_element(
        By.CSS_SELECTOR, f'button[data-version="{version}"]'
    ).click()


def show_version(driver: WebDriver, version: int) -> None:
    """Click ``version`` in the versions table and wait until its plots have loaded."""
    click_version(driver, version)
    settled(driver, "plots-panel", "plots-error")


def open_version(driver: WebDriver, url: str, model: str, version: int) -> None:
    """Open the console at ``url`` on ``version`` of ``model`` (its plots loaded)."""
    open_console(driver, url)
    click_model(driver, model)
    show_version(driver, version)


def whatif_answered(driver: WebDriver, costs: Callable[[str | None], bool], what: str) -> None:
    """Wait until the what-if panel answers for the costs ``costs`` accepts (its
    ``data-costs``) or fails; fail with the message it shows if it failed."""
    wait_for(
        driver,
        lambda d: (
            state_of(d, "whatif-result") == "error"
            or (
                state_of(d, "whatif-result") == "ready"
                and costs(by_id(d, "whatif-result").get_attribute("data-costs"))
            )
        ),
        what,
    )
    assert state_of(driver, "whatif-result") == "ready", by_id(driver, "whatif-error").text


def shown_whatif(driver: WebDriver, costs: str) -> dict[str, Any]:
    """Wait until the what-if panel shows the answer for ``costs`` ("c_fp,c_fn"); read it."""
    whatif_answered(driver, lambda shown: shown == costs, f"the what-if answer for costs {costs}")
    cells = {k: value_of(by_id(driver, f"cm-{k}")) for k in ("tn", "fp", "fn", "tp")}
    return {
        "threshold": value_of(by_id(driver, "whatif-threshold")),
        "threshold_text": by_id(driver, "whatif-threshold").text,
        "mean_cost": value_of(by_id(driver, "whatif-mean-cost")),
        "total_cost": value_of(by_id(driver, "whatif-total-cost")),
        "n": value_of(by_id(driver, "whatif-n")),
        "confusion_matrix": [[cells["tn"], cells["fp"]], [cells["fn"], cells["tp"]]],
        "cm_text": [by_id(driver, f"cm-{k}").text for k in ("tn", "fp", "fn", "tp")],
    }


def slider_costs(driver: WebDriver) -> tuple[str, str]:
    return (
        by_id(driver, "c-fp-value").get_attribute("data-value") or "",
        by_id(driver, "c-fn-value").get_attribute("data-value") or "",
    )


def check_whatif(driver: WebDriver, api: httpx.Client, name: str, version: int) -> dict[str, Any]:
    """The numbers shown for the sliders' current costs are the API's /whatif answer."""
    c_fp, c_fn = slider_costs(driver)
    shown = shown_whatif(driver, f"{c_fp},{c_fn}")
    r = api.get(f"/v1/models/{name}/versions/{version}/whatif", params={"c_fp": c_fp, "c_fn": c_fn})
    assert r.status_code == 200, r.text
    expected = r.json()
    assert expected["costs"]["c_fp"] == float(c_fp) and expected["costs"]["c_fn"] == float(c_fn)
    assert shown["threshold"] == expected["threshold"]
    assert shown["threshold_text"] == f"{expected['threshold']:.4f}"
    assert shown["confusion_matrix"] == expected["confusion_matrix"]
    assert shown["cm_text"] == [f"{v:,}" for row in expected["confusion_matrix"] for v in row]
    assert shown["mean_cost"] == expected["mean_cost"]
    assert shown["total_cost"] == expected["total_cost"]
    assert shown["n"] == expected["n"]
    return expected


def test_console_shows_models_versions_plots_and_whatif_as_the_api_does(
    browser: WebDriver, api: httpx.Client
) -> None:
    rows = browser.find_elements(By.CSS_SELECTOR, "#models tbody tr")
    assert [r.get_attribute("data-model") for r in rows] == ["fraud", "nohold"]
    assert rows[0].find_element(By.CSS_SELECTOR, '[data-field="versions"]').text == "2"

    # versions: every metric shown equals the API's value
    click_model(browser, "fraud")
    versions = api.get("/v1/models/fraud/versions").json()["versions"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#versions tbody tr")
    assert [r.get_attribute("data-version") for r in rows] == ["2", "1"]
    for row, version in zip(rows, versions, strict=True):
        for metric, digits in METRIC_DIGITS.items():
            cell = row.find_element(By.CSS_SELECTOR, f'[data-metric="{metric}"]')
            expected = version.get(metric, version["metrics"].get(metric))
            assert value_of(cell) == expected, metric
            assert cell.text.removesuffix(" s") == f"{expected:.{digits}f}", metric
        assert row.find_element(By.CSS_SELECTOR, '[data-field="algorithm"]').text == "adaboost"
        calibration = row.find_element(By.CSS_SELECTOR, '[data-field="calibration"]').text
        assert calibration.startswith(version["calibration"]["method"])

    # plots: the API's list, every image decoded
    show_version(browser, 1)
    plots = api.get("/v1/models/fraud/versions/1/plots").json()["plots"]
    images = browser.find_elements(By.CSS_SELECTOR, "#plots img")
    assert [i.get_attribute("data-kind") for i in images] == [p["kind"] for p in plots]
    assert {"brier_curve", "reliability", "roc", "cost_curve"} <= {p["kind"] for p in plots}
    assert [i.get_attribute("alt") for i in images] == [p["title"] for p in plots]
    wait_for(
        browser,
        lambda d: d.execute_script(
            "return [...document.querySelectorAll('#plots img')]"
            ".every((i) => i.complete && i.naturalWidth > 0)"
        ),
        "the plot images to load",
    )

    # what-if: the initial costs, then c_fn moved by keyboard (30 steps: debounced)
    assert slider_costs(browser) == ("1", "5")
    first = check_whatif(browser, api, "fraud", 1)
    slider = by_id(browser, "c-fn")
    slider.send_keys(Keys.ARROW_RIGHT * 30)  # log10 0.70 -> 1.00: c_fn 5 -> 10
    assert slider_costs(browser) == ("1", "10")
    moved = check_whatif(browser, api, "fraud", 1)
    assert moved["threshold"] < first["threshold"]  # misses cost more: flag more

    # ... and set far away at once (value + input event, as a drag does)
    browser.execute_script(SET_SLIDER, slider, "-1")
    assert slider_costs(browser) == ("1", "0.1")
    low = check_whatif(browser, api, "fraud", 1)
    assert low["threshold"] > first["threshold"]

    # an answer that arrives after a newer one is ignored: hold back the c_fn=10 answer
    # (and let it through even though the page aborted it), move on, then release it
    browser.execute_script(DELAY_FETCH, "c_fn=10")
    browser.execute_script(SET_SLIDER, slider, "1")
    wait_for(browser, lambda d: d.execute_script("return window.__held.seen"), "c_fn=10 sent")
    browser.execute_script(SET_SLIDER, slider, "-1")
    check_whatif(browser, api, "fraud", 1)
    browser.execute_script("window.__held.release()")
    wait_for(browser, lambda d: d.execute_script("return window.__held.done"), "late answer")
    assert check_whatif(browser, api, "fraud", 1) == low  # still the c_fn=0.1 numbers

    # another version: its own numbers
    click_version(browser, 2)
    check_whatif(browser, api, "fraud", 2)


def test_console_moves_an_alias_and_the_api_sees_it(browser: WebDriver, api: httpx.Client) -> None:
    click_model(browser, "fraud")
    for version in (2, 1):
        by_id(browser, "alias-name").clear()
        by_id(browser, "alias-name").send_keys("production")
        Select(by_id(browser, "alias-version")).select_by_value(str(version))
        by_id(browser, "alias-submit").click()
        wait_for(
            browser,
            lambda d, v=version: f"now points to v{v}" in by_id(d, "alias-message").text,
            f"the alias move to v{version}",
        )
        assert api.get("/v1/models/fraud").json()["aliases"] == {"production": version}
        wait_for(
            browser,
            lambda d, v=version: (
                d.find_element(
                    By.CSS_SELECTOR, f'#versions tr[data-version="{v}"] [data-field="aliases"]'
                ).text
                == "production"
            ),
            "the versions table to show the alias",
        )
    models_row = browser.find_element(By.CSS_SELECTOR, '#models tr[data-model="fraud"]')
    assert models_row.find_element(By.CSS_SELECTOR, '[data-field="aliases"]').text == (
        "production → v1"
    )

    # a bad alias name: the API's 422 message is shown, nothing moves
    by_id(browser, "alias-name").clear()
    browser.execute_script("arguments[0].removeAttribute('pattern')", by_id(browser, "alias-name"))
    by_id(browser, "alias-name").send_keys("9-bad")
    by_id(browser, "alias-submit").click()
    wait_for(browser, lambda d: "422" in by_id(d, "alias-message").text, "the 422 message")
    assert api.get("/v1/models/fraud").json()["aliases"] == {"production": 1}


def test_console_explains_missing_heldout_rows(browser: WebDriver, api: httpx.Client) -> None:
    """No evaluation rows is a fact about the version, shown as a neutral note (the API's
    reason), not as a red error."""
    click_model(browser, "nohold")
    click_version(browser, 1)
    wait_for(browser, lambda d: state_of(d, "whatif-result") in ("empty", "error"), "what-if")
    assert state_of(browser, "whatif-result") == "empty"
    expected = api.get("/v1/models/nohold/versions/1/whatif", params={"c_fp": 1, "c_fn": 5})
    assert expected.status_code == 404
    note = by_id(browser, "whatif-note")
    assert note.is_displayed() and expected.json()["detail"].rstrip(".") in note.text
    assert not by_id(browser, "whatif-error").is_displayed()
    wait_for(browser, lambda d: state_of(d, "plots-panel") in ("empty", "error"), "plots")
    assert state_of(browser, "plots-panel") == "empty"
    assert not by_id(browser, "plots-error").is_displayed()
    detail = api.get("/v1/models/nohold/versions/1/plots").json()["detail"]
    assert detail.rstrip(".") in by_id(browser, "plots-note").text


def test_console_with_auth_uses_the_key_and_shows_401_and_403(
    browser: WebDriver, database_url: str
) -> None:
    settings = _settings(database_url, auth="on", bootstrap_admin_key=ADMIN_KEY)
    with serve(settings) as url, api_client(url, ADMIN_KEY) as admin:
        _register(admin, "fraud", n_estimators=10)
        _register(admin, "fraud", n_estimators=5)
        r = admin.post("/v1/keys", json={"name": "viewer", "role": "reader"})
        assert r.status_code == 201, r.text
        reader_key = r.json()["key"]

        open_console(browser, url)  # no key yet
        assert state_of(browser, "models-panel") == "error"
        assert by_id(browser, "models-error").text.startswith("401 UNAUTHORIZED: ")

        use_key(browser, reader_key)
        assert state_of(browser, "models-panel") == "ready"
        assert browser.execute_script("return sessionStorage.getItem('costwise.apiKey')") == (
            reader_key
        )
        click_model(browser, "fraud")
        show_version(browser, 2)
        check_whatif(browser, admin, "fraud", 2)

        by_id(browser, "alias-name").send_keys("production")
        Select(by_id(browser, "alias-version")).select_by_value("1")
        by_id(browser, "alias-submit").click()
        wait_for(browser, lambda d: "403 FORBIDDEN" in by_id(d, "alias-message").text, "403")
        assert admin.get("/v1/models/fraud").json()["aliases"] == {}

        # the key survives a reload of the page (same tab)
        open_console(browser, url)
        assert by_id(browser, "api-key").get_attribute("value") == reader_key
        assert state_of(browser, "models-panel") == "ready"

        use_key(browser, ADMIN_KEY)
        click_model(browser, "fraud")
        by_id(browser, "alias-name").send_keys("production")
        Select(by_id(browser, "alias-version")).select_by_value("1")
        by_id(browser, "alias-submit").click()
        wait_for(browser, lambda d: "now points to v1" in by_id(d, "alias-message").text, "move")
        assert admin.get("/v1/models/fraud").json()["aliases"] == {"production": 1}
        by_id(browser, "clear-key").click()
        assert browser.execute_script("return sessionStorage.getItem('costwise.apiKey')") is None
