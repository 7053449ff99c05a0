"""Could the answering model catch its own answers to questions the sources do not answer? (issue #8)

SQuAD 2.0's unanswerable questions share the paragraph's words and change one detail ("When did
Richard II flee to Normandy?" where the text says Ethelred); the 1.5B model answers them from the
nearby sentence. This re-checks a saved evaluation report's answers with one extra, grammar-constrained
call to the same model: given the passages the answer cites, the question and the answer, does the
passage state this answer to this exact question? Prints what refusing on "no" would do to refusal
accuracy and the false-refusal rate, and the seconds the check costs per answer. No answer is
regenerated; the passages are the cited chunks, read back from a fresh index of the dataset's documents.

    .venv/bin/python bench/answerability_check.py --report reports/squad2-normans/eval.json \\
        --dataset ../shared/data/squad2-normans/questions.jsonl [--limit N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from core.settings import get_settings
from eval.dataset import load_dataset
from providers.llm.base import ChatMessage
from rag.citations import strip_markers
from ragchat.application import open_session

SCHEMA = {
    "type": "object",
    "properties": {"stated": {"type": "boolean"}},
    "required": ["stated"],
}
SYSTEM = (
    "You check answers against passages. Reply with JSON. stated is true only when the passage itself "
    "says the answer to exactly the question asked: the same person, place, date and event the question "
    "names. If the question names someone or something the passage does not connect to the answer, or "
    "the answer comes from a sentence about something else, stated is false."
)


def check_messages(passages: list[str], question: str, answer: str) -> list[ChatMessage]:
    text = "\n\n".join(passages)
    user = f"Passage:\n{text}\n\nQuestion: {question}\nAnswer: {answer}\n\nDoes the passage state this answer?"
    return [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=user)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0, help="check at most this many answers (0: all)")
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    answerable = {q.id: q.answerable for q in load_dataset(args.dataset).questions}
    stored = [q for q in report["questions"] if q["id"] in answerable]
    answered = [q for q in stored if not q["refused"] and q["citations"]]
    if args.limit:
        answered = answered[: args.limit]
    stated: dict[str, bool] = {}
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-") as home:
        session = open_session(get_settings(home=Path(home), reranker_model="none"))
        session.ingest_paths(load_dataset(args.dataset).documents)
        llm = session.app.llm()
        print(f"model: {llm.label}; checking {len(answered)} cited answers", flush=True)
        for number, question in enumerate(answered, 1):
            chunks = session.document_index.store.get(list(dict.fromkeys(c["chunk_id"] for c in question["citations"])))
            passages = [chunk.text for chunk, _ in chunks.values()]
            started = time.perf_counter()
            reply = llm.complete_json(
                check_messages(passages, question["question"], strip_markers(question["answer"])), SCHEMA, 16
            )
            seconds.append(time.perf_counter() - started)
            stated[question["id"]] = bool(json.loads(reply).get("stated", True))
            if number % 20 == 0:
                print(f"  {number}/{len(answered)}", flush=True)
    _summary(stored, answerable, stated, seconds)
    return 0


def _summary(stored: list[dict], answerable: dict[str, bool], stated: dict[str, bool], seconds: list[float]) -> None:
    def refused(question: dict, with_check: bool) -> bool:
        """As the eval counts it: refused with no citations; with the check, a "no" becomes the refusal."""
        if question["refused"] and not question["citations"]:
            return True
        return with_check and stated.get(question["id"]) is False

    for label, with_check in (("as answered", False), ("with the check", True)):
        unanswerable = [refused(q, with_check) for q in stored if not answerable[q["id"]]]
        wrongly = [refused(q, with_check) for q in stored if answerable[q["id"]]]
        print(
            f"{label:>15}: refusal accuracy {sum(unanswerable) / len(unanswerable):.3f} "
            f"({sum(unanswerable)}/{len(unanswerable)}), false refusals {sum(wrongly) / len(wrongly):.3f} "
            f"({sum(wrongly)}/{len(wrongly)})"
        )
    for kind, flag in (("unanswerable", False), ("answerable", True)):
        checked = [stated[q] for q in stated if answerable[q] is flag]
        print(f"checked {kind} answers the model said are not stated: {checked.count(False)} of {len(checked)}")
    if seconds:
        print(f"check cost per answer: median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s")


if __name__ == "__main__":
    raise SystemExit(main())
