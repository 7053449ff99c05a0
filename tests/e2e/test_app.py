"""The Streamlit app end to end with the real models: upload a PDF, ask, read the cited answer.

Streamlit 1.67's AppTest drives st.file_uploader (FileUploader.set_value), so the PDF goes in through
the sidebar exactly as a person would add it; no pre-ingestion through the service is needed.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Node

from core.settings import PROJECT_ROOT
from tests.fixtures import write_report_pdf

APP = PROJECT_ROOT / "app.py"
QUESTION = "What was the Q2 revenue of the Westland region?"
TIMEOUT_S = 240


def _texts(block: Block) -> str:
    """All markdown (which includes st.write_stream's output) and captions under a block, joined."""
    return "\n".join([m.value for m in block.markdown] + [c.value for c in block.caption])


def wait_for_ingest(at: AppTest, polls: int = 240) -> None:
    """Ingests run in the background; the page polls them. Rerun until no progress bar is left."""
    for _ in range(polls):
        if not at.get("progress"):
            return
        time.sleep(0.5)
        at.run()
    raise AssertionError("the ingest did not finish")


def _popovers(node: Node) -> list[Block]:
    """Every st.popover under a node (AppTest has no accessor for them): the citation chips."""
    found: list[Block] = []
    for child in getattr(node, "children", {}).values():
        if isinstance(child, Block) and child.type == "popover":
            found.append(child)
        found += _popovers(child)
    return found


def test_upload_ask_and_cite(home: Path, tmp_path: Path) -> None:
    # st.cache_resource lives for the whole process: drop any Session built for another home.
    st.cache_resource.clear()
    pdf = write_report_pdf(tmp_path / "report.pdf").read_bytes()

    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert not at.exception
    assert "Upload a document in the sidebar to start." in [i.value for i in at.main.info]

    at.sidebar.file_uploader[0].set_value(("report.pdf", pdf, "application/pdf"))
    at.run()
    index_button = next(b for b in at.sidebar.button if b.label == "Index files")
    index_button.click().run()
    wait_for_ingest(at)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]  # failures show as calm notices (warnings)
    sidebar = _texts(at.sidebar)
    assert "report.pdf" in sidebar and "3 pages" in sidebar
    assert any("report.pdf" in s.value and "indexed" in s.value for s in at.sidebar.success)

    at.chat_input[0].set_value(QUESTION).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]
    assistant = [m for m in at.chat_message if m.name == "assistant"]
    assert len(assistant) == 1
    assert "8.15" in _texts(assistant[0])

    # One chip per citation, labelled with the file and page; it holds the cited passage.
    chips = _popovers(assistant[0])
    assert chips, "no citation chips under the answer"
    chip = next(c for c in chips if "report.pdf · p. 2" in c.proto.popover.label)
    cited = _texts(chip)
    assert "report.pdf" in cited and "p. 2" in cited and "8.15" in cited

    # The model that answered is now named in the sidebar, not "not loaded yet".
    assert "qwen2.5-coder-0.5b" in _texts(at.sidebar)

    # Retrieval transparency: every candidate with its ranks, and the reranker named honestly.
    details = [e for e in at.expander if e.label.startswith("Retrieval details")]
    assert len(details) == 1
    table = details[0].dataframe[0].value
    assert {"BM25 rank", "dense rank", "fused", "rerank"} <= set(table.columns)
    assert table["source"].str.contains("report.pdf").all()
    assert "Reranker: none (" in _texts(details[0])

    # The sidebar controls feed the next search: BM25 weight 1 is keyword-only.
    slider = next(s for s in at.sidebar.slider if s.label.startswith("Keyword (BM25) weight"))
    slider.set_value(1.0).run()
    assert next(t for t in at.sidebar.toggle if t.label.startswith("Rerank")).disabled
    at.chat_input[0].set_value("And the South region?").run()
    assert not at.exception
    last = [e for e in at.expander if e.label.startswith("Retrieval details")][-1].dataframe[0].value
    assert last["dense rank"].isna().all() and last["BM25 rank"].notna().all()
    # The follow-up was searched as a standalone query and the app says what it searched for.
    assert "Searched for:" in _texts([m for m in at.chat_message if m.name == "assistant"][-1])


def test_a_stated_fact_is_noted_and_shown_in_the_memory_panel(home: Path) -> None:
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert not at.exception
    at.chat_input[0].set_value("I'm a Project Finance Analyst.").run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    reply = _texts([m for m in at.chat_message if m.name == "assistant"][-1])
    assert "Noted in user memory: The user is a Project Finance Analyst." in reply

    panel = next(e for e in at.sidebar.expander if e.label.startswith("Memory"))
    assert panel.label == "Memory (1)"
    assert "The user is a Project Finance Analyst." in _texts(panel)
    assert "added · USER · confidence" in _texts(panel)  # what the last turn wrote
    assert (home / "USER_MEMORY.md").read_text(encoding="utf-8").endswith("- The user is a Project Finance Analyst.\n")

    undo = next(b for b in panel.button if b.help == "Take back what this turn wrote")
    undo.click().run()
    assert not at.exception
    panel = next(e for e in at.sidebar.expander if e.label.startswith("Memory"))
    assert panel.label == "Memory (0)"
    assert "Removed: The user is a Project Finance Analyst." in [i.value for i in panel.info]
    assert "The user is a Project Finance Analyst." not in (home / "USER_MEMORY.md").read_text(encoding="utf-8")
    assert not [b for b in panel.button if b.help == "Take back what this turn wrote"]  # nothing left to undo

    # A line written by hand is listed too, and its delete button removes it.
    with (home / "USER_MEMORY.md").open("a", encoding="utf-8") as memory_file:
        memory_file.write("- The user works from Oslo.\n")
    at.run()
    panel = next(e for e in at.sidebar.expander if e.label.startswith("Memory"))
    assert panel.label == "Memory (1)"
    forget = next(b for b in panel.button if b.help == "Forget this")
    forget.click().run()
    assert not at.exception
    assert next(e for e in at.sidebar.expander if e.label.startswith("Memory")).label == "Memory (0)"
    assert "The user works from Oslo." not in (home / "USER_MEMORY.md").read_text(encoding="utf-8")
