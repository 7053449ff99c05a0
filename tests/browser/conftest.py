"""One real app server per module (model loads are the cost), a headless Chromium, a fresh browser
context per test, screenshots into test-artifacts/browser/ (and the server log, and a screenshot of
the page where a test failed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from core.settings import PROJECT_ROOT
from tests.browser.app_server import CHROMIUM, MISSING_CHROMIUM, free_port, launch_chromium, running_app
from tests.conftest import BROWSER_ARTIFACTS, TEST_LLM
from tests.openmeteo_replay import (
    ARCHIVE_PATH,
    FORECAST_PATH,
    GEOCODING_PATH,
    LONDON,
    LONDON_ONTARIO,
    ReplayServer,
    Reply,
    geocoding_by_name,
    hourly,
    series,
)

README_SCREENSHOT = PROJECT_ROOT / "docs" / "screenshot.png"
VIEWPORT = {"width": 1400, "height": 900}
ACTION_TIMEOUT_MS = 60_000  # the first page view builds the session (embedder, indexes): seconds on 2 cores
expect.set_options(timeout=ACTION_TIMEOUT_MS)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """test-artifacts/browser/, emptied at the start of the run (tests/conftest.py pytest_configure)."""
    BROWSER_ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return BROWSER_ARTIFACTS


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.fail(MISSING_CHROMIUM, pytrace=False)
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def openmeteo() -> Iterator[ReplayServer]:
    """The tests' 127.0.0.1 Open-Meteo: "London" resolves to two places (the larger one wins)."""
    with ReplayServer() as server:
        server.routes[GEOCODING_PATH] = geocoding_by_name({"London": [LONDON, LONDON_ONTARIO]})
        server.routes[FORECAST_PATH] = Reply.json(hourly(series(7)))
        yield server


@pytest.fixture(scope="module")
def app_url(
    tmp_path_factory: pytest.TempPathFactory, openmeteo: ReplayServer, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[str]:
    """`streamlit run app.py` with a temporary home, the 0.5B test model, no reranker, the replay
    server as Open-Meteo and no Ollama (a closed local port), as every other test runs."""
    root = tmp_path_factory.mktemp("browser-app")
    env = {
        "RAGCHAT_HOME": str(root / "home"),
        "RAGCHAT_LLM_PROVIDER": "llamacpp",
        "RAGCHAT_LLM_MODEL": TEST_LLM,
        "RAGCHAT_RERANKER_DIR": str(root / "flashrank-cache"),
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        "RAGCHAT_OPENMETEO_GEOCODING_URL": openmeteo.url(GEOCODING_PATH),
        "RAGCHAT_OPENMETEO_FORECAST_URL": openmeteo.url(FORECAST_PATH),
        "RAGCHAT_OPENMETEO_ARCHIVE_URL": openmeteo.url(ARCHIVE_PATH),
        "RAGCHAT_OPENMETEO_TIMEOUT_S": "5",
    }
    with running_app(env, root, artifacts / f"streamlit-{request.module.__name__.rsplit('.', 1)[-1]}.log") as url:
        yield url


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep the call phase's report on the item, so the page fixture knows whether the test failed."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_REPORT] = report
    return report


_CALL_REPORT = pytest.StashKey[pytest.TestReport]()


@pytest.fixture
def page(browser: Browser, app_url: str, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh context (own session, clipboard allowed for the app) on the app's first page."""
    context = browser.new_context(viewport=VIEWPORT)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_url)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    tab = context.new_page()
    tab.goto(app_url)
    try:
        yield tab
    finally:
        report = request.node.stash.get(_CALL_REPORT, None)
        if report is not None and report.failed:
            tab.screenshot(path=str(artifacts / f"{request.node.name}-failed.png"), full_page=True)
        context.close()


@pytest.fixture
def readme_screenshot(request: pytest.FixtureRequest) -> Path | None:
    """docs/screenshot.png when the run was asked to refresh it (--readme-screenshot), else None."""
    return README_SCREENSHOT if request.config.getoption("--readme-screenshot") else None
