"""Choosing the passages an overview of a long document is written from, without the model."""

from __future__ import annotations

from core.schemas import Chunk, Hit, Scores
from rag.overview import (
    choose_passages,
    navigation_chunks,
    opening,
    opening_count,
    outline_line,
    section_openings,
    spread,
)
from tests.chunks import text_chunk


def chunk(index: int, text: str, path: list[str], page: int) -> Chunk:
    return text_chunk(text, chunk_id=f"c{index}", source="m.pdf", page=page, index=index).model_copy(
        update={"heading_path": path}
    )


def as_hits(chunks: list[Chunk]) -> list[Hit]:
    return [Hit(chunk=c, scores=Scores()) for c in chunks]


def test_openings_spread_and_sentences() -> None:
    assert spread(list(range(10)), 3) == [0, 4, 9] or spread(list(range(10)), 3) == [0, 5, 9]
    assert spread([1, 2], 5) == [1, 2]
    text = "First sentence here. Second one follows. Third is long " + "word " * 80 + "end."
    assert text[: opening(text, 20)] == "First sentence here. Second one follows."
    assert text[: opening(text, 1)] == "First sentence here.", "at least the first sentence"
    chunks = [chunk(0, "Title.", [], 1), chunk(1, "A.", ["1 Intro"], 1), chunk(2, "B.", ["1 Intro"], 2)]
    assert section_openings(chunks) == [0, 1]


def test_the_choice_covers_the_document_skips_its_contents_and_keeps_to_the_budget() -> None:
    items = []
    for n in range(60):
        section = f"{n // 10 + 1} Chapter"
        text = f"Chapter {n // 10 + 1} explains topic {n}. It has a second sentence about topic {n}."
        vector = [1.0 if i == n % 6 else 0.1 for i in range(8)]
        items.append((chunk(n, text, [section], page=n + 2), vector))
    contents = "Contents\n1 Chapter . . . . . 2\n2 Chapter . . . . . 12\n3 Chapter . . . . . 22\n4 Chapter . . . . 32"
    items.append((chunk(60, contents, [], page=1), [0.0] * 7 + [1.0]))
    choice = choose_passages(items, budget=400, header_tokens=8, query=None)
    pages = [h.chunk.page for h in choice.hits]
    assert pages == sorted(pages), "in document order"
    assert 1 not in pages, "a table of contents states nothing"
    assert min(pages) <= 3 and max(pages) >= 50 and any(20 <= p <= 40 for p in pages), "beginning, middle and end"
    assert choice.structure >= 3 and choice.central >= 1
    assert sum(len(h.chunk.text) // 3 + 8 for h in choice.hits) <= 400
    assert all(h.chunk.text.endswith(".") for h in choice.hits)


def test_every_request_gets_the_same_passages_first_and_its_own_after_them() -> None:
    """The common passages do not depend on the request, so the prompt's prefix repeats (llama.cpp
    reuses it); each request's own are the chunks nearest its vector among the rest."""
    items = []
    for n in range(60):
        text = f"Chapter {n // 10 + 1} explains topic {n}. It has a second sentence about topic {n}."
        vector = [1.0 if i == n else 0.01 for i in range(60)]
        items.append((chunk(n, text, [f"{n // 10 + 1} Chapter"], page=n + 2), vector))
    towards = {n: [1.0 if i == n else 0.0 for i in range(60)] for n in (37, 44)}
    first, second = (choose_passages(items, 400, 8, towards[n], request_tokens=60) for n in (37, 44))
    assert [h.chunk.chunk_id for h in first.hits] == [h.chunk.chunk_id for h in second.hits], "the same first"
    picked = {h.chunk.chunk_id for h in first.hits}
    assert {"c37", "c44"}.isdisjoint(picked), "the test asks for chunks the common passages left out"
    own = [{h.chunk.chunk_id for h in choice.requested} for choice in (first, second)]
    assert "c37" in own[0] and "c44" in own[1] and "c44" not in own[0], "each request's nearest chunk"
    assert not picked & {h.chunk.chunk_id for h in first.requested}, "never a passage twice"
    assert sum(len(h.chunk.text) // 3 + 8 for h in first.hits + first.requested) <= 400
    alone = choose_passages(items, 400, 8, None, request_tokens=60)
    assert alone.requested == [] and len(alone.hits) > len(first.hits), "without a request, the budget is common"


def test_a_contents_section_is_left_out_with_its_chunks_too_short_to_be_recognised_alone() -> None:
    toc = ["Table of Contents"]
    head = chunk(0, "Table of Contents\nPreface . . . . . . 1\n1 Cranes . . . . . . 2", toc, 1)
    body = chunk(1, "2 Tariffs . . . . . 9\n3 Berths . . . . . 14\n4 Safety . . . . . 20\n5 Shifts . . . . 31", toc, 1)
    tail = chunk(2, "6 Index . . . . . . 40", toc, 2)
    prose = [chunk(n, f"{n} Topic\nSection {n} says what topic {n} is.", [f"{n} Topic"], n) for n in range(3, 9)]
    assert navigation_chunks([head, body, tail, *prose]) == {0, 1, 2}, "the contents section whole"
    assert navigation_chunks([head, *prose]) == set(), "no chunk of it is navigation alone"
    long_section = [chunk(n, f"Tariff {n} applies at night. It is paid monthly.", ["9 Tariffs"], 9) for n in range(4)]
    price_list = chunk(4, body.text, ["9 Tariffs"], 9)
    assert navigation_chunks([*long_section, price_list]) == {4}, "the list alone, not its long section"
    items = [(c, [float(c.chunk_index == i) for i in range(9)]) for c in [head, body, tail, *prose]]
    choice = choose_passages(items, budget=400, header_tokens=8, query=None)
    assert choice.hits and all(h.chunk.heading_path != toc for h in choice.hits)
    line = outline_line(choice.hits, "Its sections include")
    assert "Table of Contents" not in line and "3 Topic" in line


def test_the_outline_line_cites_the_chosen_section_openings() -> None:
    hits = [
        text_chunk("Pump manual. Read before use.", index=0, page=1),
        chunk(1, "1 Maintenance\nGrease the bearing.", ["1 Maintenance"], 2),
        chunk(2, "Check the seals weekly.", ["1 Maintenance"], 3),
        chunk(3, "2 Safety\nSwitch the power off.", ["2 Safety"], 9),
    ]
    line = outline_line(as_hits(hits), "Its sections include")
    assert line == "Its sections include: 1 Maintenance [2]; 2 Safety [4]."
    assert outline_line(as_hits(hits[:3]), "Its sections include") == "", "one section is no outline"


def test_an_index_letter_is_not_a_section_of_the_outline() -> None:
    hits = [
        chunk(0, "1 Maintenance\nGrease the bearing.", ["1 Maintenance"], 2),
        chunk(1, "M\nmatrix, 12; mean, 40", ["M"], 90),
        chunk(2, "Xp\nxpdrows, 7", ["Xp"], 91),
        chunk(3, "2 Safety\nSwitch the power off.", ["2 Safety"], 9),
    ]
    line = outline_line(as_hits(hits), "Its sections include")
    assert line == "Its sections include: 1 Maintenance [1]; 2 Safety [4]."


def test_the_opening_is_the_first_passages_that_fit_and_at_least_one() -> None:
    hits = as_hits([chunk(n, "word " * 30, [], n + 1) for n in range(6)])  # 51 tokens of text each
    assert opening_count(hits, 130, header_tokens=10) == 2  # 61 tokens each
    assert opening_count(hits, 5, header_tokens=10) == 1, "the first passage even when it is longer"
    assert opening_count(hits, 10_000, header_tokens=10) == len(hits)
