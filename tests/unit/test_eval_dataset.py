"""The evaluation dataset format: header, questions, clear errors, the SQuAD adapter, seeded samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.dataset import STARTER_DATASET, DatasetError, load_dataset
from eval.metrics import normalize_passage
from ingestion.parsers import parse_document


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


def test_header_documents_resolve_relative_to_the_dataset(tmp_path: Path) -> None:
    (tmp_path / "sets").mkdir()
    path = write_jsonl(
        tmp_path / "sets" / "mine.jsonl",
        [
            {"dataset": "mine", "documents": ["../docs/a.md"]},
            {"id": "q1", "question": "What?", "reference": "that", "gold": [{"source": "a.md", "text": "that"}]},
            {"id": "q2", "question": "And then?", "reference": None, "conversation": "c", "category": "out-of-scope"},
        ],
    )
    dataset = load_dataset(path)
    assert dataset.name == "mine"
    assert dataset.documents == [(tmp_path / "docs" / "a.md").resolve()]
    assert [q.answerable for q in dataset.questions] == [True, False]
    assert dataset.questions[1].conversation == "c"


def test_a_file_without_header_is_named_after_itself(tmp_path: Path) -> None:
    dataset = load_dataset(write_jsonl(tmp_path / "quick.jsonl", [{"id": "a", "question": "Q?", "reference": "x"}]))
    assert dataset.name == "quick" and dataset.documents == []


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "question": "Q?", "reference": "x"}', "{not json"], "line 2: not JSON"),
        (['{"id": "a", "question": "", "reference": "x"}'], "line 1: question"),
        (['{"id": "a", "question": "Q?"}'], "line 1: reference"),
        (['{"id": "a", "question": "Q?", "reference": null, "gold": [{"source": "x.md"}]}'], "cannot have gold"),
        (['{"id": "a", "question": "Q?", "reference": "x"}'] * 2, "appears twice"),
        (["", "   "], "holds no questions"),
        (["[1, 2]"], "expected a JSON object"),
    ],
)
def test_bad_files_fail_with_the_line_and_the_reason(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_dataset(path)


def test_missing_file_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path / "nope.jsonl")


def test_squad_rows_become_answerable_and_unanswerable_questions(tmp_path: Path) -> None:
    (tmp_path / "Doc.md").write_text("# Doc\n\nRollo led the Norse.\n", encoding="utf-8")
    path = write_jsonl(
        tmp_path / "questions.jsonl",
        [
            {
                "id": "1",
                "question": "Who led?",
                "answers": ["Rollo", "Rollo the Walker"],
                "is_impossible": False,
                "plausible_answers": [],
                "doc_file": "Doc.md",
                "gold_char_spans_in_doc": [[7, 12], [7, 12]],
            },
            {
                "id": "2",
                "question": "Who followed?",
                "answers": [],
                "is_impossible": True,
                "plausible_answers": ["Rollo"],
                "doc_file": "Doc.md",
                "gold_char_spans_in_doc": [],
            },
        ],
    )
    dataset = load_dataset(path)
    assert dataset.name == tmp_path.name  # a questions.jsonl is named after its folder
    assert dataset.documents == [(tmp_path / "Doc.md").resolve()]
    answerable, impossible = dataset.questions
    assert answerable.category == "answerable" and answerable.all_references == ["Rollo", "Rollo the Walker"]
    assert answerable.gold[0].source == "Doc.md" and answerable.gold[0].char_spans == [(7, 12), (7, 12)]
    assert impossible.category == "unanswerable" and not impossible.answerable and impossible.gold == []


def test_sample_is_seeded_proportional_and_keeps_conversations_whole(tmp_path: Path) -> None:
    rows = [{"id": f"a{i}", "question": f"Q{i}?", "reference": "x"} for i in range(20)]
    rows += [{"id": f"u{i}", "question": f"U{i}?", "reference": None} for i in range(20)]
    rows += [
        {"id": "c1", "question": "First?", "reference": "x", "conversation": "c"},
        {"id": "c2", "question": "And?", "reference": "y", "conversation": "c"},
    ]
    dataset = load_dataset(write_jsonl(tmp_path / "set.jsonl", rows))
    first, again, other = dataset.sample(10, seed=1), dataset.sample(10, seed=1), dataset.sample(10, seed=2)
    assert [q.id for q in first.questions] == [q.id for q in again.questions]
    assert [q.id for q in first.questions] != [q.id for q in other.questions]
    for sample in (first, other):
        ids = [q.id for q in sample.questions]
        assert 9 <= len(ids) <= 11
        assert ("c1" in ids) == ("c2" in ids)
        assert 4 <= sum(q.answerable for q in sample.questions) <= 7
        assert "seed" in sample.note
    assert dataset.sample(100, seed=1) is dataset


def test_the_starter_set_is_valid_and_its_gold_passages_are_in_its_documents() -> None:
    dataset = load_dataset(STARTER_DATASET)
    categories = {q.category for q in dataset.questions}
    assert {"factual", "numeric", "multi-hop", "follow-up", "out-of-scope"} <= categories
    assert any(len(q.gold) > 1 for q in dataset.questions)  # multi-hop
    assert any(not q.answerable for q in dataset.questions)
    conversations = [q.conversation for q in dataset.questions if q.conversation]
    assert conversations and all(conversations.count(c) >= 2 for c in conversations)
    assert {p.suffix for p in dataset.documents} == {".md", ".txt", ".pdf"}
    pages = {}
    for path in dataset.documents:
        for page in parse_document(path.name, path.read_bytes()).pages:
            pages[(path.name, page.number)] = normalize_passage(page.text)  # table rows without their labels
    for question in dataset.questions:
        for gold in question.gold:
            texts = [t for (src, number), t in pages.items() if src == gold.source and gold.page in (None, number)]
            assert any(normalize_passage(gold.text or "") in t for t in texts), (question.id, gold)
