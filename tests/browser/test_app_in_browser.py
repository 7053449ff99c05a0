"""The app in a real browser (headless Debian Chromium, Playwright), served by `streamlit run app.py`
with the real models: what a person does and sees, step by step, with a screenshot of each step.

One server for the module, so the models load once: the chat flow (upload, index, a streamed and
cited answer, a refusal, a remembered fact, the settings and model status) and the Weather page
against the tests' 127.0.0.1 Open-Meteo replay server.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from rag.messages import REFUSAL_TEXT
from tests.conftest import TEST_LLM
from tests.fixtures import write_report_pdf
from tests.openmeteo_replay import FORECAST_PATH, ReplayServer

QUESTION = "What was the Q2 revenue of the Westland region?"
OUT_OF_SCOPE = "Who painted the Mona Lisa?"
FACT = "I'm a Project Finance Analyst."
NOTED = "Noted in user memory: The user is a Project Finance Analyst."
ANSWER_TIMEOUT_MS = 240_000
NOTES_MD = """# Warehouse safety notes

## Forklifts
Only certified operators may drive a forklift. The certification takes two days and is renewed every
three years.

## Loading docks
Dock doors stay closed while no truck is parked. Wheel chocks are placed before loading starts.
"""

# Records every text the newest assistant message's first paragraph shows, as it changes: a streamed
# answer shows several growing texts before the final one; an answer printed at once shows one.
WATCH_ANSWER_JS = """() => {
  window.__answerTexts = [];
  const observer = new MutationObserver(() => {
    const messages = document.querySelectorAll('[data-testid="stChatMessage"]');
    const last = messages[messages.length - 1];
    if (!last || !last.querySelector('[data-testid="stChatMessageAvatarAssistant"]')) return;
    const first = Array.from(last.querySelectorAll('[data-testid="stMarkdownContainer"]'))
      .find((element) => !element.closest('button'));  // the answer, not the Stop button's label
    const text = first ? first.innerText.trim() : "";
    const seen = window.__answerTexts;
    if (text && seen[seen.length - 1] !== text) seen.push(text);
  });
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


class Steps:
    """Screenshots of one test's steps: test-artifacts/browser/<test>-<n>-<step>.png."""

    def __init__(self, page: Page, artifacts: Path, test: str) -> None:
        self.page, self.artifacts, self.test, self.count = page, artifacts, test, 0

    def shot(self, step: str) -> None:
        """Save the page, after checking it shows no exception box (the app must show calm notices)."""
        expect(self.page.get_by_test_id("stException")).to_have_count(0)
        self.count += 1
        self.page.screenshot(path=str(self.artifacts / f"{self.test}-{self.count:02d}-{step}.png"), full_page=True)


def last_assistant(page: Page) -> Locator:
    return page.get_by_test_id("stChatMessage").filter(has=page.get_by_test_id("stChatMessageAvatarAssistant")).last


def send(page: Page, text: str) -> None:
    """Type into the chat box and press Enter, as a person would (no mouse)."""
    box = page.get_by_test_id("stChatInputTextArea")
    expect(box).to_be_enabled()
    box.fill(text)
    box.press("Enter")


def test_upload_ask_cite_refuse_and_remember(
    page: Page, artifacts: Path, tmp_path: Path, readme_screenshot: Path | None
) -> None:
    steps = Steps(page, artifacts, "chat")
    main, sidebar = page.get_by_role("main"), page.get_by_test_id("stSidebar")

    # Empty state: what to do first.
    expect(main.get_by_text("Upload a document in the sidebar to start.")).to_be_visible()
    steps.shot("empty")

    # Upload a PDF with a table and a Markdown file through the sidebar's uploader, then index them.
    pdf = write_report_pdf(tmp_path / "report.pdf")
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES_MD, encoding="utf-8")
    sidebar.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([pdf, notes])
    index = sidebar.get_by_role("button", name="Index files")
    expect(index).to_be_enabled()
    index.click()
    ready = main.get_by_text(re.compile(r"^Ask about .*in the box below"))
    expect(ready).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(ready).to_contain_text("report.pdf")
    expect(ready).to_contain_text("notes.md")
    expect(page.get_by_test_id("stChatInputTextArea")).to_have_attribute(
        "placeholder", "Ask a question about your documents"
    )
    steps.shot("indexed")

    # Ask: the answer streams in (its text grows before it is final), then its sources appear as chips.
    page.evaluate(WATCH_ANSWER_JS)
    send(page, QUESTION)
    answer = last_assistant(page)
    chip = answer.get_by_role("button", name=re.compile(r"report\.pdf · p\. 2"))
    expect(chip).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(answer).to_contain_text("8.15")
    texts: list[str] = page.evaluate("window.__answerTexts")
    # Streamed: the text on screen took several values and grew. (Not "some text came before the
    # figure": the answer may open with it, and the first render can already hold it.)
    assert len(texts) >= 3, f"the answer did not stream in: {texts}"
    assert len(texts[0]) < len(texts[-1]), texts

    # The chip opens the cited passage with its file and page.
    chip.click()
    passage = page.get_by_test_id("stPopoverBody")
    expect(passage).to_be_visible()
    expect(passage).to_contain_text("report.pdf")
    expect(passage).to_contain_text("p. 2")
    expect(passage).to_contain_text("8.15")
    # ... and the PDF page itself, the passage highlighted; the next page is one click away.
    expect(passage.get_by_role("img")).to_be_visible()
    expect(passage).to_contain_text("Page 2 of 3, the cited passage highlighted")
    steps.shot("answer-with-source")
    if readme_screenshot is not None:
        page.screenshot(path=str(readme_screenshot), full_page=True)
    passage.get_by_role("button", name="Next page").click()
    expect(passage).to_contain_text("Page 3 of 3")
    expect(passage.get_by_role("button", name="Next page")).to_be_disabled()
    steps.shot("source-next-page")
    page.keyboard.press("Escape")
    expect(passage).to_be_hidden()

    # Copy puts the answer's text on the clipboard.
    copy = answer.get_by_role("button", name="Copy the answer")
    copy.click()
    expect(copy).to_contain_text("Copied")
    assert "8.15" in page.evaluate("navigator.clipboard.readText()")

    # A new conversation (so no follow-up rewriting): a question the documents do not answer gets the
    # refusal sentence and no sources.
    sidebar.get_by_role("button", name="New conversation").click()
    expect(ready).to_be_visible()
    send(page, OUT_OF_SCOPE)
    refusal = last_assistant(page)
    expect(refusal).to_contain_text(REFUSAL_TEXT, timeout=ANSWER_TIMEOUT_MS)
    expect(refusal.get_by_test_id("stPopoverButton")).to_have_count(0)
    steps.shot("refusal")

    # Keyboard only: the chat box kept the focus, so the next message is typed and sent with Enter.
    # A stated fact is noted, and the sidebar's memory panel lists it.
    expect(page.get_by_test_id("stChatInputTextArea")).to_be_focused()
    page.keyboard.type(FACT)
    page.keyboard.press("Enter")
    expect(last_assistant(page)).to_contain_text(NOTED, timeout=ANSWER_TIMEOUT_MS)
    memory = sidebar.get_by_test_id("stExpander").filter(has_text="Memory (1)")
    expect(memory).to_be_visible()
    memory.get_by_text("Memory (1)").click()
    expect(memory.get_by_text("The user is a Project Finance Analyst.", exact=True)).to_be_visible()
    steps.shot("memory")

    # Settings: the model in use is the selected one; the status line says it is loaded.
    settings = sidebar.get_by_test_id("stExpander").filter(has_text="Settings")
    settings.get_by_text("Settings", exact=True).click()
    expect(settings.get_by_role("combobox", name="Answering model")).to_have_value(re.compile(re.escape(TEST_LLM)))
    top_k = settings.get_by_text("Passages given to the model (top k)")
    expect(top_k).to_be_visible()
    top_k.scroll_into_view_if_needed()
    expect(sidebar.get_by_text(re.compile(r"Ready$"))).to_be_visible()  # the status badge (icon + word)
    expect(sidebar.get_by_text(re.compile(r"LLM: llama\.cpp · " + re.escape(TEST_LLM)))).to_be_visible()
    steps.shot("settings")


def test_weather_page_shows_a_chart_and_the_table(page: Page, artifacts: Path, openmeteo: ReplayServer) -> None:
    steps = Steps(page, artifacts, "weather")
    page.set_viewport_size({"width": 1400, "height": 2200})  # charts and table in one screenshot
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Weather").click()
    main, sidebar = page.get_by_role("main"), page.get_by_test_id("stSidebar")
    expect(main.get_by_text("Enter a place in the sidebar to see its weather.")).to_be_visible()

    sidebar.get_by_label("Place").fill("London")
    sidebar.get_by_label("Place").press("Enter")
    explain = sidebar.get_by_role("switch", name="Explain in plain words")
    sidebar.get_by_text("Explain in plain words", exact=True).click()  # the model's part is tested in tests/e2e
    expect(explain).not_to_be_checked()
    sidebar.get_by_role("button", name="Get weather").click()

    expect(main.get_by_role("heading", name=re.compile("London"))).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    chart = main.get_by_test_id("stVegaLiteChart").first
    expect(chart).to_be_visible()
    expect(chart.locator("canvas, svg").first).to_be_visible()
    expect(main.get_by_role("heading", name="Daily aggregates")).to_be_visible()
    expect(main.get_by_test_id("stDataFrame").first).to_be_visible()
    assert openmeteo.requests_to(FORECAST_PATH), "the page did not ask the replay server for a forecast"
    steps.shot("forecast")
