"""A request about the whole document in a real browser: upload a PDF, ask what it is about, and get
an answer with citations (not the refusal), said to come from the whole document; then stop a
summary while it is written, and find the model free for the next question."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from rag.messages import REFUSAL_TEXT
from tests.browser.test_app_in_browser import ANSWER_TIMEOUT_MS, Steps, last_assistant, send
from tests.fixtures import write_report_pdf
from ui.chat_page import STOPPED_TEXT


def test_what_is_this_document_about_gets_a_cited_answer(page: Page, artifacts: Path, tmp_path: Path) -> None:
    steps = Steps(page, artifacts, "document-request")
    main, sidebar = page.get_by_role("main"), page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([write_report_pdf(tmp_path / "report.pdf")])
    sidebar.get_by_role("button", name="Index files").click()
    expect(main.get_by_text(re.compile(r"^Ask about .*in the box below"))).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(sidebar.get_by_text("Ask about", exact=True)).to_be_visible()  # the document picker
    steps.shot("indexed")

    send(page, "What is this document about?")
    answer = last_assistant(page)
    chip = answer.get_by_role("button", name=re.compile(r"report\.pdf · p\. [123]")).first
    expect(chip).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(answer.get_by_text("About report.pdf: given whole")).to_be_visible()
    expect(answer).not_to_contain_text(REFUSAL_TEXT)
    chip.click()
    expect(page.get_by_test_id("stPopoverBody")).to_contain_text("report.pdf")
    steps.shot("cited-answer")

    send(page, "Summarize the document in 3 bullets.")
    stop = last_assistant(page).get_by_role("button", name="Stop")
    expect(stop).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    stop.click()
    expect(last_assistant(page)).to_contain_text(STOPPED_TEXT, timeout=ANSWER_TIMEOUT_MS)
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    steps.shot("stopped")

    send(page, "What is this document about?")
    expect(last_assistant(page).get_by_role("button", name=re.compile(r"report\.pdf · p\. [123]")).first).to_be_visible(
        timeout=ANSWER_TIMEOUT_MS
    )
