"""Headless Chromium over the dashboard pages (Debian's chromium, driven by Playwright).

These tests run only with ``FREEZEDEBT_BROWSER=1`` (``.ci/run`` sets it and installs chromium
when it is missing); a plain ``pytest`` skips them. No browser is ever downloaded.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("FREEZEDEBT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
ENABLED = os.environ.get("FREEZEDEBT_BROWSER") == "1"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser: runs in headless Chromium; only with FREEZEDEBT_BROWSER=1"
    )


def pytest_collection_modifyitems(config, items):
    if ENABLED:
        return
    skip = pytest.mark.skip(reason="browser tests run with FREEZEDEBT_BROWSER=1 (see .ci/run)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def chromium():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; Django would take every ORM call
    # of the test (loading the demo, finding ids) for one made from async code and refuse it.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()
        playwright.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


# The browser asks for /favicon.ico by itself on pages without an icon link (the login page);
# that answer is not a page's doing.
IGNORED_PATHS = ("/favicon.ico",)


class ConsoleErrors(list):
    """Console errors, uncaught exceptions and failed requests of a page: there must be none."""

    def attach(self, page) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.append(f"page error: {error}"))
        page.on(
            "requestfailed",
            lambda request: self.append(f"request failed: {request.url} {request.failure}"),
        )
        page.on("response", self._response)

    def _console(self, message) -> None:
        # A failed load is logged without its address; _response records it with the address.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.append(f"console: {message.text}")

    def _response(self, response) -> None:
        if response.status >= 400 and not response.url.split("?")[0].endswith(IGNORED_PATHS):
            self.append(f"HTTP {response.status}: {response.url}")


@dataclass
class Browsing:
    page: Any
    errors: ConsoleErrors


@pytest.fixture
def browsing(chromium, live_server):
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": 1400, "height": 900}, accept_downloads=True
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors = ConsoleErrors()
    errors.attach(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield Browsing(page=page, errors=errors)
    finally:
        context.close()
