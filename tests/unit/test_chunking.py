from __future__ import annotations

from ingestion.chunking import chunk_document, locate, markdown_sections
from ingestion.parsers import content_hash
from ragchat.schemas import Document, Page


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
    assert [s.heading_path for s in sections] == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
        ("Guide", "Usage"),
    ]
    assert "# not a heading" in sections[1].text
    chunks = chunk_document(_document("md", [Page(number=0, text=text)]), 200, 0)
    assert all(c.page == 0 for c in chunks)
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
    linux = next(c for c in chunks if "apt" in c.text)
    assert linux.heading_path == ["Guide", "Install", "Linux"]
    assert "Guide › Install › Linux" in linux.locator


def test_locate_tolerates_whitespace_changes() -> None:
    haystack = "alpha beta\n\ngamma   delta epsilon"
    assert locate(haystack, "gamma delta", 0) == haystack.index("gamma")
    assert locate(haystack, "beta", 0) == haystack.index("beta")
