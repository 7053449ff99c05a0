"""How many ordinary questions leave the passage path for the whole-document one (no LLM).

A SQuAD-style question set (`questions.jsonl` with `question` and `doc_file`) is routed against its
documents indexed in a temporary RAGCHAT_HOME, with the rule of rag/document_stages.py RouteRequest:
to the documents when P(document) reaches `route_sure_threshold`, or reaches `route_whole_threshold`
and the question's document fits the prompt whole, or reaches `route_threshold` and no retrieved
passage reaches `refusal_threshold`. Every such question is a false positive (they all ask
for one fact); the router alone (P ≥ route_threshold) is printed beside it.

    .venv/bin/python bench/routing_ordinary_questions.py ../shared/data/squad2-normans
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="a folder with questions.jsonl and its documents")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(RAGCHAT_HOME=str(Path(tmp) / "home"), RAGCHAT_RERANKER_DIR=str(Path(tmp) / "none"))
        from core.settings import get_settings
        from rag.document_stages import ReadDocuments, RouteRequest
        from ragchat.application import open_session

        settings = get_settings(memory_enabled=False)
        session = open_session(settings)
        rows = [json.loads(line) for line in (args.dataset / "questions.jsonl").read_text().splitlines() if line]
        session.ingest_paths(sorted({args.dataset / row["doc_file"] for row in rows}))
        stage = RouteRequest(session.app.embedder.embed, settings)
        read = ReadDocuments(session.document_index.registry, settings)
        records = {record.source: record for record in session.documents()}
        leaning = routed = 0
        for row in rows:
            route = stage.run(row["question"], {})
            if route.kind != "document":
                continue
            leaning += 1
            fits = stage.leans(route) and read.whole(row["question"], [records[Path(row["doc_file"]).name]]) is not None
            if stage.sure(route) or fits or stage.unmatched(route, session.search(row["question"])):
                routed += 1
                print(f"  to the documents (p={route.p_document:.2f}): {row['question']}")
        print(
            f"{len(rows)} questions: router alone {leaning} ({leaning / len(rows):.1%}) to the documents; "
            f"with the retrieval check {routed} ({routed / len(rows):.1%})"
        )


if __name__ == "__main__":
    main()
