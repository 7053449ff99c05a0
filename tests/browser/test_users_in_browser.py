"""Header mode in a real browser: `streamlit run app.py` with RAGCHAT_USER_HEADER=X-Forwarded-User,
and browser contexts that send the header as a sign-in proxy would (Playwright's extra HTTP headers
go with every request, the app's WebSocket included). Each signed-in user sees their own name and
memory and no field to change them; a browser without the header sees the message and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from memory.markdown_store import memory_files
from tests.browser.app_server import free_port, running_app
from tests.browser.conftest import ACTION_TIMEOUT_MS, VIEWPORT
from tests.conftest import TEST_LLM

HEADER = "X-Forwarded-User"
FACTS = {"alice": "The user is a Project Finance Analyst.", "bob": "The user prefers weekly summaries on Mondays."}


@pytest.fixture(scope="module")
def proxied_app_url(tmp_path_factory: pytest.TempPathFactory, artifacts: Path) -> Iterator[str]:
    """The app in header mode, with alice's and bob's memories already written."""
    root = tmp_path_factory.mktemp("browser-users")
    home = root / "home"
    for user, fact in FACTS.items():
        memory_files(home / "users" / user)["USER"].add(fact)
    env = {
        "RAGCHAT_HOME": str(home),
        "RAGCHAT_LLM_PROVIDER": "llamacpp",
        "RAGCHAT_LLM_MODEL": TEST_LLM,
        "RAGCHAT_RERANKER_DIR": str(root / "flashrank-cache"),
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        "RAGCHAT_USER_HEADER": HEADER,
    }
    with running_app(env, root, artifacts / "streamlit-users.log") as url:
        yield url


def open_app(browser: Browser, url: str, headers: dict[str, str]) -> Page:
    context = browser.new_context(viewport=VIEWPORT, extra_http_headers=headers)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    page.goto(url)
    return page


def test_each_signed_in_user_sees_their_own_memory(browser: Browser, proxied_app_url: str, artifacts: Path) -> None:
    for user, fact in FACTS.items():
        page = open_app(browser, proxied_app_url, {HEADER: user.capitalize()})
        try:
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible()
            expect(sidebar.get_by_label("User name")).to_have_count(0)  # the proxy decides, not the page
            sidebar.get_by_text("Memory (1)").click()
            expect(sidebar.get_by_text(fact)).to_be_visible()
            other = next(f for u, f in FACTS.items() if u != user)
            expect(sidebar.get_by_text(other)).to_have_count(0)
            page.screenshot(path=str(artifacts / f"users-{user}.png"))
        finally:
            page.context.close()


def test_a_request_without_the_header_sees_only_the_message(
    browser: Browser, proxied_app_url: str, artifacts: Path
) -> None:
    page = open_app(browser, proxied_app_url, {})
    try:
        expect(page.get_by_text(f"expects the signed-in user in the {HEADER} header")).to_be_visible()
        expect(page.get_by_test_id("stChatInputTextArea")).to_have_count(0)
        for fact in FACTS.values():
            expect(page.get_by_text(fact)).to_have_count(0)
        page.screenshot(path=str(artifacts / "users-no-header.png"))
    finally:
        page.context.close()
