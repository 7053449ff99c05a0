from __future__ import annotations

from core.schemas import Document, Page
from ingestion.chunking import blocks, chunk_document, locate, markdown_sections
from ingestion.parsers import content_hash


def _document(file_type: str, pages: list[Page], source: str = "doc") -> Document:
    text = "".join(p.text for p in pages).encode()
    return Document(
        source=f"{source}.{file_type}",
        file_type=file_type,  # type: ignore[arg-type]
        content_hash=content_hash(text),
        size_bytes=len(text),
        pages=pages,
    )


LONG_PAGE = " ".join(f"Sentence number {i} talks about topic {i % 7} in some detail." for i in range(120))


def test_chunks_never_cross_pages_and_offsets_are_exact() -> None:
    pages = [Page(number=1, text=LONG_PAGE), Page(number=2, text="Short second page. It ends here.")]
    chunks = chunk_document(_document("pdf", pages), chunk_size=60, chunk_overlap=10)
    assert {c.page for c in chunks} == {1, 2}
    assert len([c for c in chunks if c.page == 1]) > 3
    for chunk in chunks:
        page_text = pages[chunk.page - 1].text
        assert page_text[chunk.char_start : chunk.char_end] == chunk.text
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))


def test_chunks_end_at_sentence_boundaries() -> None:
    chunks = chunk_document(_document("pdf", [Page(number=1, text=LONG_PAGE)]), chunk_size=60, chunk_overlap=0)
    assert all(c.text.rstrip().endswith(".") for c in chunks)


def test_chunk_ids_are_stable_and_depend_on_source() -> None:
    pages = [Page(number=1, text=LONG_PAGE)]
    first = chunk_document(_document("pdf", pages), 60, 10)
    again = chunk_document(_document("pdf", pages), 60, 10)
    other_name = chunk_document(_document("pdf", pages, source="copy"), 60, 10)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert len({c.chunk_id for c in first}) == len(first)
    assert not {c.chunk_id for c in first} & {c.chunk_id for c in other_name}


def test_markdown_heading_paths_and_fenced_code() -> None:
    text = (
        "# Guide\nIntro text.\n\n## Install\nRun the installer.\n\n```bash\n# not a heading\nmake run\n```\n\n"
        "### Linux\nUse apt.\n\n## Usage\nAsk questions.\n"
    )
    sections = markdown_sections(text)
    assert [(s.heading_path, s.kind) for s in sections] == [
        (("Guide",), "text"),
        (("Guide", "Install"), "text"),
        (("Guide", "Install"), "code"),
        (("Guide", "Install", "Linux"), "text"),
        (("Guide", "Usage"), "text"),
    ]
    assert sections[2].text == "```bash\n# not a heading\nmake run\n```"
    chunks = chunk_document(_document("md", [Page(number=0, text=text)]), 200, 0)
    assert all(c.page == 0 for c in chunks)
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
    linux = next(c for c in chunks if "apt" in c.text)
    assert linux.heading_path == ["Guide", "Install", "Linux"]
    assert "Guide › Install › Linux" in linux.locator
    code = [c for c in chunks if c.kind == "code"]
    assert [c.text for c in code] == ["```bash\n# not a heading\nmake run\n```"]
    assert code[0].heading_path == ["Guide", "Install"]


def test_text_files_are_located_by_section_and_lines_never_by_page() -> None:
    text = "".join(f"Line {n} says the depot {n} opens at {n} o'clock.\n" for n in range(1, 80))
    text = "# Depots\n\n## Hours\n\n" + text
    lines = text.splitlines()
    for file_type in ("md", "txt"):
        chunks = chunk_document(_document(file_type, [Page(number=0, text=text)]), 60, 10)
        assert len(chunks) > 3
        for chunk in chunks:
            assert chunk.line_start is not None and chunk.line_end is not None
            assert chunk.text.splitlines()[0] in lines[chunk.line_start - 1]
            assert chunk.text.rstrip("\n").splitlines()[-1] in lines[chunk.line_end - 1]
            assert "p. " not in chunk.locator and "chars" not in chunk.locator
            assert chunk.locator.endswith(f"lines {chunk.line_start}–{chunk.line_end}")
            # An excerpt (what the model is given) is located on its own lines.
            second = chunk.text.index("\n") + 1
            part = chunk.excerpt(second, len(chunk.text))
            assert part.text.splitlines()[0] in lines[part.line_start - 1]  # type: ignore[operator]
            assert (part.line_start, part.line_end) == (chunk.line_start + 1, chunk.line_end)
        if file_type == "md":
            assert chunks[-1].locator.startswith("Depots › Hours · lines ")
    pdf = chunk_document(_document("pdf", [Page(number=2, text=text)]), 60, 10)
    assert all(c.line_start is None and c.locator.startswith("p. 2 · ") for c in pdf)


CODE = "\n".join(f"    value_{i} = compute(value_{i - 1}, factor={i})  # step {i}." for i in range(1, 120))


def test_a_long_code_block_is_one_verbatim_chunk() -> None:
    """Far longer than the chunk size, with sentence-like lines: still never split, never reflowed."""
    block = f"~~~~python\ndef pipeline():\n{CODE}\n\n    return value_119\n~~~~"
    text = f"# API\n\nSome prose before. It has sentences.\n\n{block}\n\nProse after the block.\n"
    chunks = chunk_document(_document("md", [Page(number=0, text=text)]), 60, 10)
    code = [c for c in chunks if c.kind == "code"]
    assert len(code) == 1
    assert code[0].text == block
    assert text[code[0].char_start : code[0].char_end] == block
    prose = [c for c in chunks if c.kind == "text"]
    assert prose and all("value_" not in c.text for c in prose)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))


def test_fences_close_only_with_their_own_marker() -> None:
    text = "# Doc\n\n````md\n```python\nx = 1\n```\n# inside\n````\n\n## After\nEnd.\n"
    sections = markdown_sections(text)
    assert [(s.heading_path, s.kind) for s in sections] == [(("Doc",), "code"), (("Doc", "After"), "text")]
    assert sections[0].text.endswith("# inside\n````")


def test_an_unclosed_fence_runs_to_the_end() -> None:
    text = "# Doc\nIntro.\n\n```\ncode line\n## not a heading\n"
    sections = markdown_sections(text)
    assert sections[-1].kind == "code" and "## not a heading" in sections[-1].text


def test_setext_headings() -> None:
    text = "Title\n=====\n\nIntro.\n\nPart two\n--------\n\nDetails.\n"
    assert [s.heading_path for s in markdown_sections(text)] == [("Title",), ("Title", "Part two")]


def test_huge_single_line_is_chunked_in_linear_time_with_exact_offsets() -> None:
    import time

    line = " ".join(f"word{i % 977}" for i in range(60_000))  # ~470 KB, no punctuation, no newline
    started = time.perf_counter()
    chunks = chunk_document(_document("txt", [Page(number=0, text=line)]), 200, 0)
    elapsed = time.perf_counter() - started
    assert len(chunks) > 100
    for chunk in chunks:
        assert line[chunk.char_start : chunk.char_end] == chunk.text
    assert elapsed < 60, f"chunking a 470 KB line took {elapsed:.0f} s"


def test_blocks_cut_at_breaks_and_cover_everything() -> None:
    text = ("para " * 50 + "\n\n") * 200 + "x" * 50_000
    pieces = list(blocks(text, 5_000))
    assert "".join(piece for _, piece in pieces) == text
    assert all(len(piece) <= 5_000 for _, piece in pieces)
    assert all(text[offset : offset + len(piece)] == piece for offset, piece in pieces)


def test_locate_tolerates_whitespace_changes() -> None:
    haystack = "alpha beta\n\ngamma   delta epsilon"
    assert locate(haystack, "gamma delta", 0) == haystack.index("gamma")
    assert locate(haystack, "beta", 0) == haystack.index("beta")


def test_each_chunk_carries_its_language_and_a_short_one_takes_its_pages() -> None:
    french = (
        "# Procès-verbal\n\n"
        + "Le comité approuve la demande de démolition partielle du bâtiment situé boulevard Sainte-Adèle. " * 12
        + "\n\n# 43\n\n"
        + "The committee approved the request without any opposition from the public. " * 12
    )
    chunks = chunk_document(_document("md", [Page(number=0, text=french)]), 60, 0)
    by_heading = {c.heading_path[-1]: c.lang for c in chunks if c.kind == "text"}
    assert by_heading["Procès-verbal"] == "fr"
    english = [c for c in chunks if c.heading_path == ["43"]]
    assert english and all(c.lang == "en" for c in english)
    # A chunk that says too little to tell ("43 %") takes its page's language, not the default (en).
    page = "Le comité approuve la demande de démolition partielle du bâtiment. " * 6 + "\n\n# Total\n\n43 %"
    figure = chunk_document(_document("md", [Page(number=0, text=page)]), 60, 0)[-1]
    assert figure.text.strip().endswith("43 %") and len(figure.text) < 20 and figure.lang == "fr"
