"""Whole documents as passages, sections, the reply's form, the scope rules and the section-summary
cache (a real SQLite file; the scope's document list is a stand-in registry)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.language import LanguageDetector
from core.schemas import DocumentRecord, Page
from providers.llm.base import Sampling
from rag.citations import tidy_markers
from rag.document_stages import ChooseScope, cited_sentences
from rag.router import Form
from rag.whole_document import (
    SectionSummaryCache,
    document_grammar,
    document_messages,
    opening_prompt,
    passages,
    sections,
)

TEXT = " ".join(f"Sentence number {n} says something about topic {n}." for n in range(1, 31))


def record(source: str, content_hash: str = "v1") -> DocumentRecord:
    return DocumentRecord(
        doc_id=f"id-{source}",
        source=source,
        file_type="pdf",
        content_hash=content_hash,
        size_bytes=1,
        pages=2,
        chunks=2,
        ingested_at=datetime.now(UTC),
    )


def test_passages_cover_every_page_in_order_within_the_budget_and_point_at_their_text() -> None:
    pages = [Page(number=1, text=TEXT), Page(number=2, text="A short second page.")]
    hits = passages(record("a.pdf"), pages, tokens=60)
    assert [h.chunk.page for h in hits][-1] == 2 and len({h.chunk.chunk_id for h in hits}) == len(hits)
    assert all(len(h.chunk.text.encode()) / 3 <= 60 for h in hits[:-1])
    for hit in hits:
        page = pages[hit.chunk.page - 1].text
        assert page[hit.chunk.char_start : hit.chunk.char_end] == hit.chunk.text
    joined = " ".join(h.chunk.text for h in hits if h.chunk.page == 1)
    assert joined == TEXT


def test_sections_never_mix_documents_and_respect_their_size() -> None:
    hits = passages(record("a.pdf"), [Page(number=1, text=TEXT)], 40) + passages(
        record("b.pdf"), [Page(number=1, text=TEXT)], 40
    )
    groups = sections(hits, tokens=120, header_tokens=16)
    assert all(len({h.chunk.source for h in g}) == 1 for g in groups)
    assert sum(len(g) for g in groups) == len(hits) and len(groups) > 2


@pytest.mark.parametrize(
    ("form", "pattern"),
    [
        (Form(bullets=3), r'^root ::= "- " sentence \("\\n- " sentence\)\{2\}$'),
        (Form(), r'^root ::= sentence \(" " sentence\)\{0,3\}$'),
        (Form(sentences=1), r'^root ::= sentence \(" " sentence\)\{0,0\}$'),
        (Form(words=60), r'^root ::= sentence \(" " sentence\)\{0,2\}$'),
    ],
)
def test_the_grammar_fixes_the_requested_form_and_cites_only_given_ids(form: Form, pattern: str) -> None:
    grammar = document_grammar([1, 2, 3], form, max_sentences=4)
    assert re.match(pattern, grammar.splitlines()[0]), grammar
    assert 'cite ::= "[" ("1" | "2" | "3") "]"' in grammar


@pytest.mark.parametrize(
    ("form", "opening", "rest"),
    [
        (Form(bullets=3), r'^root ::= "- " sentence$', r'^root ::= \("\\n- " sentence\)\{2\}$'),
        (Form(bullets=0), r'^root ::= "- " sentence$', r'^root ::= \("\\n- " sentence\)\{0,3\}$'),
        (Form(), r"^root ::= sentence$", r'^root ::= \(" " sentence\)\{0,3\}$'),
    ],
)
def test_an_answer_written_in_two_calls_has_one_first_item_then_the_rest_of_the_form(
    form: Form, opening: str, rest: str
) -> None:
    """The opening writes the first bullet or sentence over the first passages (it may cite only
    those), the rest continues it: together they are the form asked for."""
    first = document_grammar([1, 2], form, max_sentences=4, part="opening")
    assert re.match(opening, first.splitlines()[0]), first
    assert 'cite ::= "[" ("1" | "2") "]"' in first
    after = document_grammar([1, 2, 3, 4], form, max_sentences=4, part="rest")
    assert re.match(rest, after.splitlines()[0]), after
    assert 'cite ::= "[" ("1" | "2" | "3" | "4") "]"' in after


def test_the_opening_asks_for_the_first_item_alone_over_the_same_first_passages() -> None:
    hits = passages(record("a.pdf"), [Page(number=1, text=TEXT)], 40)
    whole = Sampling(max_tokens=300, temperature=0.0)
    two = opening_prompt("Summarize it in 3 bullets.", hits, 2, Form(bullets=3), 4, "en", whole, no_cjk=False)
    one = document_messages("Summarize it in 3 bullets.", hits, Form(bullets=3), 4, chosen=True)
    system, first = two.messages
    assert system == one[0], "the same system prompt"
    assert "[1] (" in first.content and "[2] (" in first.content and "[3] (" not in first.content
    assert "first bullet point" in first.content and "exactly 3" not in first.content
    shared = first.content.index("</evidence>")
    assert one[1].content[:shared] == first.content[:shared], "llama.cpp reuses the first passages"
    assert two.sampling.max_tokens == 120 and two.rest.max_tokens == 300, "a run-on opening is cut"


def test_markers_after_the_full_stop_move_before_it_and_repeats_go() -> None:
    assert tidy_markers("- It employs 640 people. [1] [1]\n- It plans a depot. [3].") == (
        "- It employs 640 people [1].\n- It plans a depot [3]."
    )
    assert tidy_markers("Sales grew 3.5% [2]. Costs fell [1] [2].") == "Sales grew 3.5% [2]. Costs fell [1] [2]."


def test_a_section_summary_keeps_the_sentences_that_cite_a_passage_of_the_section() -> None:
    found = cited_sentences("The plant opened in 1998 [2]. It closed later. Staff grew [9]. Sales rose. [1]", 3)
    assert found == [("The plant opened in 1998.", 1), ("Sales rose.", 0)]


class Registry:
    def __init__(self, records: list[DocumentRecord]) -> None:
        self.records = records

    def all(self) -> list[DocumentRecord]:
        return self.records

    def pages(self, doc_id: str, content_hash: str) -> Iterator[Page]:
        return iter([])


def test_scope_selected_then_named_then_the_only_one_then_the_last_upload_else_ask_back() -> None:
    two = ChooseScope(Registry([record("onboarding_guide.pdf"), record("minutes.txt")]), 0.5)
    assert [d.source for d in two.run("Summarise it", ("minutes.txt",), (), "en").documents] == ["minutes.txt"]
    assert two.run("Summarise it", ("nothing.pdf",), (), "en").clarify is not None
    assert [d.source for d in two.run("What does the onboarding guide cover?", (), (), "en").documents] == [
        "onboarding_guide.pdf"
    ]
    assert [d.source for d in two.run("What is this about?", (), ("minutes.txt",), "en").documents] == ["minutes.txt"]
    unclear = two.run("What is this about?", (), (), "en")
    assert unclear.documents == [] and unclear.clarify and "onboarding_guide.pdf" in unclear.clarify
    one = ChooseScope(Registry([record("report.pdf")]), 0.5)
    assert [d.source for d in one.run("What is this about?", (), (), "en").documents] == ["report.pdf"]
    assert ChooseScope(Registry([]), 0.5).run("What is this about?", (), (), "en").clarify


def test_a_request_for_every_document_reads_them_all_unless_one_was_chosen_or_just_uploaded() -> None:
    two = ChooseScope(Registry([record("onboarding_guide.pdf"), record("minutes.txt")]), 0.5)
    every = "Give me one line about each of my files."
    assert [d.source for d in two.run(every, (), (), "en", p_every=0.9).documents] == [
        "onboarding_guide.pdf",
        "minutes.txt",
    ]
    assert two.run(every, (), (), "en", p_every=0.2).several  # not sure: the pipeline searches across them
    assert [d.source for d in two.run(every, ("minutes.txt",), (), "en", p_every=0.9).documents] == ["minutes.txt"]
    assert [d.source for d in two.run(every, (), ("minutes.txt",), "en", p_every=0.9).documents] == ["minutes.txt"]


def test_the_question_asked_back_is_in_the_askers_language() -> None:
    two = ChooseScope(Registry([record("onboarding_guide.pdf"), record("minutes.txt")]), 0.5)
    detector = LanguageDetector()
    for lang in ("fr", "de", "es"):
        unclear = two.run("Résume-le", (), (), lang)
        assert unclear.several and unclear.clarify and "onboarding_guide.pdf, minutes.txt" in unclear.clarify
        assert detector(unclear.clarify) == lang
        missing = two.run("Résume-le", ("nothing.pdf",), (), lang).clarify or ""
        assert "nothing.pdf" in missing and detector(missing) == lang
        assert detector(ChooseScope(Registry([]), 0.5).run("Résume-le", (), (), lang).clarify or "") == lang


def test_the_cache_keeps_summaries_by_version_and_drops_replaced_and_deleted_ones(tmp_path: Path) -> None:
    cache = SectionSummaryCache(tmp_path / "registry.sqlite")
    hits = passages(record("a.pdf"), [Page(number=1, text=TEXT)], 60)
    key = cache.key(hits, "model", 120)
    assert key != cache.key(hits, "another model", 120)
    cache.put("id-a.pdf", "v1", key, [("It says things.", 0)])
    cache.put("id-b.pdf", "v1", key, [("Other things.", 0)])
    assert cache.get("id-a.pdf", "v1", key) == [("It says things.", 0)]
    assert cache.get("id-a.pdf", "v2", key) is None
    assert cache.keep_only({"id-a.pdf": "v2"}) == 2  # a.pdf replaced, b.pdf deleted
    assert cache.count() == 0


def test_passages_of_a_text_file_carry_their_lines() -> None:
    text = "# Title\n\nFirst line of prose.\nSecond line goes on.\n\nA last paragraph here."
    txt = record("notes.md").model_copy(update={"file_type": "md"})
    hits = passages(txt, [Page(number=0, text=text)], tokens=8)
    assert hits[0].chunk.line_start == 1 and hits[-1].chunk.line_end == 6
    for hit in hits:
        lines = text.splitlines()[hit.chunk.line_start - 1 : hit.chunk.line_end]
        assert (
            hit.chunk.text.splitlines()[0] in lines[0]
            and text[hit.chunk.char_start : hit.chunk.char_end] == hit.chunk.text
        )
