"""Headless Chromium for the comparison page: Debian's ``chromium`` and ``chromium-driver`` (``make setup``
installs them), driven through Selenium, never a downloaded browser. The screenshot, the benchmark and the tests
open the page with it."""

from __future__ import annotations

import shutil
from pathlib import Path

#: Where Debian puts the browser and its driver.
CHROMIUM = ("chromium", "chromium-browser")
DRIVER = "chromedriver"


def missing() -> str | None:
    """Why the page cannot be opened here (None: it can): no chromium, no chromedriver, or no Selenium."""
    if not any(shutil.which(name) for name in CHROMIUM):
        return "chromium is not installed (make setup installs Debian's chromium and chromium-driver)"
    if not shutil.which(DRIVER):
        return "chromedriver is not installed (Debian's chromium-driver; make setup installs it)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (requirements.txt; make setup)"
    return None


def driver(width: int = 1400, height: int = 1000):
    """A headless Chromium with its console log kept (``driver.get_log("browser")``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    reason = missing()
    if reason:
        raise RuntimeError(reason)
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.binary_location = next(shutil.which(name) for name in CHROMIUM if shutil.which(name))
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which(DRIVER)), options=options)


def url(page: Path) -> str:
    return Path(page).resolve().as_uri()
