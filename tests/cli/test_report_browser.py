"""report.html in a real browser (headless Chromium), on a real run with the SmolLM2-135M judge (plumbing).

Chromium and its driver come from Debian (`apt-get install chromium chromium-driver`; `scripts/setup.sh --tests`
installs them): nothing here downloads a browser or a driver.
"""

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
ARTIFACTS = Path(os.environ.get("LOCALEVAL_TEST_ARTIFACTS", Path(__file__).resolve().parents[1] / "artifacts"))
ATTACK = "4 </script><script>alert(1)</script> <b>bold</b>"
ROWS = [
    {
        "id": "paris",
        "user_input": "What is the capital of France?",
        "response": "Paris is the capital of France.",
        "retrieved_contexts": ["Paris is the capital of France."],
        "reference": "Paris is the capital of France.",
    },
    {
        "id": "inject",
        "user_input": "What is 2+2?",
        "response": ATTACK,
        "retrieved_contexts": ["2+2 equals 4."],
        "reference": "4",
    },
    {
        "id": "tokyo",
        "user_input": "日本の首都は？",
        "response": "東京です。",
        "retrieved_contexts": [],
        "reference": "東京です。",
    },  # no context: NaN with a reason, and no judge call
]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    data = write_jsonl(folder / "data.jsonl", ROWS)
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--judge",
            "smollm2-135m",
            "--n-ctx",
            "4096",
            "--metrics",
            "faithfulness,context_precision,exact_match",
            "--out",
            str(folder / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    return folder / "out" / "report.html"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.fail(
            "The report's browser test needs Debian's Chromium and its driver: "
            "apt-get install -y --no-install-recommends chromium chromium-driver "
            "(scripts/setup.sh --tests does it)."
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # selenium-manager may look for nothing on the network
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1100",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def ids(driver) -> list[str]:
    return [row.get_attribute("data-id") for row in driver.find_elements("css selector", "#samples tr.sample")]


@pytest.mark.slow
def test_the_report_opens_sorts_filters_and_shows_evidence(browser, report):  # no browser: fail before the run
    from selenium.common.exceptions import NoAlertPresentException

    browser.get(report.as_uri())
    assert browser.title == "localeval: out"
    assert ids(browser) == ["paris", "inject", "tokyo"]
    assert "By language" in browser.find_element("tag name", "body").text

    browser.find_element("css selector", "#samples th[data-key='id']").click()
    assert ids(browser) == ["inject", "paris", "tokyo"]
    browser.find_element("css selector", "#samples th[data-key='id']").click()
    assert ids(browser) == ["tokyo", "paris", "inject"]

    browser.find_element("css selector", "#samples tr.sample[data-id='inject']").click()
    panel = browser.find_element("css selector", "#samples tr.evidence")
    assert panel.is_displayed()
    assert ATTACK in panel.text  # the response's sentence, shown as text
    assert "statement" in panel.text and "verdict" in panel.text
    assert panel.find_elements("tag name", "b") == []  # the <b> in the data is not markup
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # the injected script never ran

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "report.png"))
    shutil.copy(report, ARTIFACTS / "report.html")

    browser.find_element("id", "filter").send_keys("tok")
    assert ids(browser) == ["tokyo"]
    assert browser.find_element("id", "count").text == "1–1 of 1 samples (3 in all)"
    browser.find_element("css selector", "#samples tr.sample[data-id='tokyo']").click()
    assert "NaN reason: empty_contexts" in browser.find_element("css selector", "#samples tr.evidence").text

    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []
