"""Headless Chromium for the HTML report tests, with the network off.

Debian's ``chromium`` and ``chromium-driver`` packages (``.ci/run`` installs
them). Every request other than ``file:`` and ``data:`` is blocked through the
DevTools protocol and the network is emulated offline; the performance log
records every request the page makes, so a test can check there was none to
another host. Without Chromium the tests are skipped locally but *fail* under
CI (``CI`` set), so a CI run cannot pass without running them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webdriver_client import Chrome

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1300,1600",
)
BLOCKED = ["http://*", "https://*", "ws://*", "wss://*", "ftp://*", "*://*:*"]
# Injected before any page script: records alert() calls and CSP violations.
_PROBE = """
window.__alerts = [];
window.alert = function (m) { window.__alerts.push(String(m)); };
window.__violations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why}; CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(why)


def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A Chromium page driven through chromedriver, offline, that remembers its requests."""

    def __init__(self, driver: Chrome) -> None:
        self.driver = driver

    def open(self, path: Path) -> None:
        self.driver.get_log("performance")  # forget earlier pages' requests
        self.driver.get(path.resolve().as_uri())

    def requests(self, page: Path) -> list[str]:
        """The URL of every request ``page`` started since it was opened.

        (Chromium's own pages, such as the first tab's, are not the report's.)
        """
        document = page.resolve().as_uri()
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message["params"]
            if message["method"] == "Network.requestWillBeSent":
                if params.get("documentURL") == document:
                    urls.append(params["request"]["url"])
        return urls

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    binary = _find("chromium", "chromium-browser")
    driver_path = _find("chromedriver")
    if binary is None or driver_path is None:
        _missing("headless Chromium not found (apt-get install chromium chromium-driver)")
    profile = tempfile.mkdtemp(prefix="textsim-chromium-")
    driver = Chrome(
        driver_path,
        binary,
        [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"],
        logging={"performance": "ALL", "browser": "ALL"},
    )
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": BLOCKED})
        driver.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
        )
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _PROBE})
        yield Browser(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
