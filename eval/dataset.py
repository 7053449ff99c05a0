"""Evaluation datasets: the JSONL format, its loader, and the SQuAD 2.0 adapter.

Format (one JSON object per line, UTF-8):

- an optional first line, the header: ``{"dataset": NAME, "description": ..., "documents": [PATH, ...]}``;
  document paths are relative to the dataset file and are ingested before the questions run;
- then one question per line: ``{"id", "question", "reference", "references", "category",
  "conversation", "gold": [{"source", "page", "text", "char_spans"}]}``. ``reference`` is null for a
  question the documents cannot answer (it must be refused). Questions sharing a ``conversation`` are
  asked in file order in one session, so later ones are follow-ups. Every ``gold`` item must be found
  in some cited or retrieved chunk (a multi-hop question lists several); within one item, ``text`` is a
  verbatim passage (whitespace and case are ignored) and ``char_spans`` are alternative offsets into
  the page text, any one of which is enough.

A file of SQuAD-style rows (``is_impossible``, ``answers``, ``gold_char_spans_in_doc``, ``doc_file``), as
in ``../shared/data/squad2-normans/questions.jsonl``, is read through the same loader.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, model_validator

STARTER_DATASET = Path(__file__).resolve().parent / "datasets" / "starter.jsonl"


class DatasetError(ValueError):
    """The dataset file cannot be used; the message names the file and line."""


class GoldEvidence(BaseModel):
    """Where the answer is: a document, optionally a page, and a passage or character spans in it."""

    source: str = Field(description="File name as ingested, e.g. 'report.pdf'.")
    page: int | None = Field(default=None, description="1-based PDF page; None matches any page.")
    text: str | None = Field(default=None, description="A verbatim passage of the page (whitespace-insensitive).")
    char_spans: list[tuple[int, int]] = Field(
        default_factory=list, description="Alternative [start, end) offsets into the page text; any one suffices."
    )


class EvalQuestion(BaseModel):
    id: str
    question: str = Field(min_length=1)
    reference: str | None = Field(description="The expected answer; None when the documents do not hold one.")
    references: list[str] = Field(default_factory=list, description="Further acceptable answers.")
    category: str = "general"
    conversation: str | None = Field(default=None, description="Questions sharing it run in one session, in order.")
    gold: list[GoldEvidence] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> EvalQuestion:
        if self.reference is None and self.gold:
            raise ValueError("a question without a reference (out of scope) cannot have gold evidence")
        return self

    @property
    def answerable(self) -> bool:
        return self.reference is not None

    @property
    def all_references(self) -> list[str]:
        return [r for r in [self.reference, *self.references] if r]


class EvalDataset(BaseModel):
    name: str
    description: str = ""
    documents: list[Path] = Field(default_factory=list)
    questions: list[EvalQuestion]
    note: str = Field(default="", description="How this set was drawn, e.g. a seeded sample.")

    @model_validator(mode="after")
    def _unique_ids(self) -> EvalDataset:
        seen: set[str] = set()
        for q in self.questions:
            if q.id in seen:
                raise ValueError(f"question id {q.id!r} appears twice")
            seen.add(q.id)
        return self

    def sample(self, size: int, seed: int) -> EvalDataset:
        """A reproducible random subset of about `size` questions, drawn separately from answerable and
        unanswerable questions in proportion, keeping each conversation whole and in file order."""
        if size >= len(self.questions):
            return self
        groups: dict[str, list[EvalQuestion]] = {}
        for q in self.questions:
            groups.setdefault(q.conversation or f"q:{q.id}", []).append(q)
        rng = random.Random(seed)
        chosen: set[str] = set()
        for answerable in (True, False):
            keys = sorted(k for k, g in groups.items() if g[0].answerable is answerable)
            share = sum(len(groups[k]) for k in keys) / len(self.questions)
            rng.shuffle(keys)
            target, taken = round(size * share), 0
            for key in keys:
                if taken >= target:
                    break
                chosen.add(key)
                taken += len(groups[key])
        picked = [q for q in self.questions if (q.conversation or f"q:{q.id}") in chosen]
        note = f"random sample of {len(picked)} of {len(self.questions)} questions (seed {seed})"
        return self.model_copy(update={"questions": picked, "note": note})


def load_dataset(path: Path) -> EvalDataset:
    """Read a dataset file (our format or SQuAD-style rows); errors name the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"cannot read dataset {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise DatasetError(f"dataset {path} is not UTF-8 text") from exc
    rows = list(_parse_lines(path, lines))
    if not rows:
        raise DatasetError(f"dataset {path} holds no questions")
    if any("is_impossible" in row for _, row in rows):
        return _from_squad(path, rows)
    header: dict[str, object] = {}
    if "question" not in rows[0][1]:
        header = rows.pop(0)[1]
    questions: list[EvalQuestion] = []
    for number, row in rows:
        try:
            questions.append(EvalQuestion.model_validate(row))
        except ValidationError as exc:
            raise DatasetError(f"{path}, line {number}: {_first_error(exc)}") from exc
    documents = [(path.parent / str(doc)).resolve() for doc in _as_list(header.get("documents"))]
    try:
        return EvalDataset(
            name=str(header.get("dataset") or path.stem),
            description=str(header.get("description") or ""),
            documents=documents,
            questions=questions,
        )
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_first_error(exc)}") from exc


def _parse_lines(path: Path, lines: list[str]) -> Iterable[tuple[int, dict]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise DatasetError(f"{path}, line {number}: expected a JSON object")
        yield number, row


def _as_list(value: object) -> list[object]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _from_squad(path: Path, rows: list[tuple[int, dict]]) -> EvalDataset:
    """SQuAD 2.0 rows → our questions: answerable/unanswerable categories, all gold spans as alternatives."""
    questions: list[EvalQuestion] = []
    documents: dict[str, Path] = {}
    for number, row in rows:
        try:
            source = str(row["doc_file"])
            documents.setdefault(source, (path.parent / source).resolve())
            impossible = bool(row["is_impossible"])
            answers = [str(a) for a in row.get("answers") or []]
            spans = [(int(s), int(e)) for s, e in row.get("gold_char_spans_in_doc") or []]
            questions.append(
                EvalQuestion(
                    id=str(row["id"]),
                    question=str(row["question"]),
                    reference=None if impossible else answers[0],
                    references=[] if impossible else answers[1:],
                    category="unanswerable" if impossible else "answerable",
                    gold=[] if impossible or not spans else [GoldEvidence(source=source, char_spans=spans)],
                )
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise DatasetError(f"{path}, line {number}: not a usable SQuAD row ({exc!r})") from exc
    return EvalDataset(
        name=path.parent.name if path.name == "questions.jsonl" else path.stem,
        description="SQuAD 2.0 dev questions (answerable and deliberately unanswerable)",
        documents=list(documents.values()),
        questions=questions,
    )
