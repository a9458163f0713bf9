"""The what-if panel's review action in a real headless Chromium, checked against the API:
with the review action on, the two thresholds that bound the review band are shown and
drawn where the band's figures say (the chart's scale: 0 and 1 at its ends), the rows sent
to review and the cost equal ``GET .../whatif?c_review=``; switched off, the panel shows
the two-action answer again and no band."""

from __future__ import annotations

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.app.console.conftest import wait_for
from tests.app.console.test_console_browser import (
    SET_SLIDER,
    api,  # noqa: F401 - fixture
    by_id,
    check_whatif,
    click_model,
    live,  # noqa: F401 - fixture
    show_version,
    shown_whatif,
    slider_costs,
    value_of,
    whatif_answered,
)

WIDTH, PAD = 460, 16  # the band chart's viewBox width and padding (whatif.js)


def _x(p: float) -> float:
    return PAD + p * (WIDTH - 2 * PAD)


def _review_answer(driver: WebDriver, api_: httpx.Client) -> dict[str, object]:
    c_fp, c_fn = slider_costs(driver)
    c_review = by_id(driver, "c-review-value").get_attribute("data-value") or ""
    costs = f"{c_fp},{c_fn},{c_review}"
    shown = shown_whatif(driver, costs)
    r = api_.get(
        "/v1/models/fraud/versions/1/whatif",
        params={"c_fp": c_fp, "c_fn": c_fn, "c_review": c_review},
    )
    assert r.status_code == 200, r.text
    expected = r.json()
    review = expected["review"]
    assert shown["threshold"] == expected["threshold"]  # the two-action figures stay
    assert shown["confusion_matrix"] == expected["confusion_matrix"]
    assert value_of(by_id(driver, "whatif-reviewed")) == review["reviewed"]
    assert value_of(by_id(driver, "whatif-review-total")) == review["total_cost"]
    chart = by_id(driver, "review-band-chart")
    plain = by_id(driver, "review-plain")
    assert float(plain.get_attribute("data-value") or "nan") == expected["threshold"]
    assert float(plain.get_attribute("data-x") or "nan") == pytest.approx(_x(expected["threshold"]))
    if review["band"] is None:
        assert chart.get_attribute("data-band") == "none"
        assert not driver.find_elements(By.CSS_SELECTOR, "#review-band-chart .bound")
        assert by_id(driver, "whatif-band").get_attribute("data-value") == "none"
        return review
    low, high = review["band"]
    assert by_id(driver, "whatif-band").get_attribute("data-value") == f"{low},{high}"
    assert by_id(driver, "whatif-band").text == f"{low:.4f} to {high:.4f}"
    for line_id, value in (("review-low", low), ("review-high", high)):
        line = by_id(driver, line_id)
        assert float(line.get_attribute("data-value") or "nan") == value
        assert float(line.get_attribute("x1") or "nan") == pytest.approx(_x(value))
        assert line.rect["height"] > 0  # drawn (a vertical line: no width)
    rect = driver.find_element(By.CSS_SELECTOR, "#review-band-chart rect.band")
    assert float(rect.get_attribute("x") or "nan") == pytest.approx(_x(low))
    assert float(rect.get_attribute("width") or "nan") == pytest.approx(_x(high) - _x(low))
    # drawn where it should be on the page: the rendered lines keep the order and spacing
    left = by_id(driver, "review-low").rect["x"]
    right = by_id(driver, "review-high").rect["x"]
    width = chart.rect["width"]
    assert (right - left) / width == pytest.approx(
        (high - low) * (WIDTH - 2 * PAD) / WIDTH, abs=0.01
    )
    return review


def test_review_band_is_shown_and_drawn_as_the_api_says(
    browser: WebDriver,
    api: httpx.Client,  # noqa: F811
) -> None:
    click_model(browser, "fraud")
    show_version(browser, 1)
    check_whatif(browser, api, "fraud", 1)
    assert not by_id(browser, "review-figure").is_displayed()
    assert not by_id(browser, "c-review").is_enabled()
    by_id(browser, "review-on").click()
    assert by_id(browser, "c-review").is_enabled()
    review = _review_answer(browser, api)  # c_fp 1, c_fn 5, c_review 0.5: a band
    assert review["band"] is not None and by_id(browser, "review-figure").is_displayed()
    browser.execute_script(SET_SLIDER, by_id(browser, "c-review"), "-1")  # c_review 0.1
    wider = _review_answer(browser, api)
    assert wider["reviewed"] >= review["reviewed"]
    browser.execute_script(SET_SLIDER, by_id(browser, "c-review"), "0.5")  # 3.2: no band
    assert _review_answer(browser, api)["band"] is None
    by_id(browser, "review-on").click()  # off: the two-action answer, no band shown
    check_whatif(browser, api, "fraud", 1)
    wait_for(browser, lambda d: not by_id(d, "review-figure").is_displayed(), "band hidden")
    whatif_answered(browser, lambda shown: shown is not None and shown.count(",") == 1, "off")
