"""`ragchat eval` and the Evaluation page end to end on the real parts (embedded Chroma, the packaged
embedder, the 0.5B GGUF), on documents the test builds. Kept to a handful of questions: each one is a
real generation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.settings import get_settings
from eval.dataset import load_dataset
from eval.runner import run_eval
from ragchat.application import open_session
from ragchat.cli import main
from tests.fixtures import write_report_pdf

TIMEOUT_S = 300
OUT_OF_SCOPE = {
    "id": "weather",
    "category": "out-of-scope",
    "question": "Will it rain in Lisbon tomorrow?",
    "reference": None,
}


def write_dataset(folder: Path, rows: list[dict]) -> Path:
    path = folder / "set.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def report_set(home: Path, tmp_path: Path) -> Path:
    """The 3-page report PDF (a revenue table on page 2) and three questions: a table lookup, a
    follow-up in the same conversation, and one the report cannot answer."""
    write_report_pdf(tmp_path / "report.pdf")
    westland = "Westland | 7.35 million | 8.15 million"
    return write_dataset(
        tmp_path,
        [
            {"dataset": "report", "documents": ["report.pdf"]},
            {
                "id": "q2",
                "category": "numeric",
                "conversation": "westland",
                "question": "What was the Q2 revenue of the Westland region?",
                "reference": "8.15 million",
                "gold": [{"source": "report.pdf", "page": 2, "text": westland}],
            },
            {
                "id": "q1",
                "category": "follow-up",
                "conversation": "westland",
                "question": "And in Q1?",
                "reference": "7.35 million",
                "gold": [{"source": "report.pdf", "page": 2, "text": westland}],
            },
            OUT_OF_SCOPE,
        ],
    )


def test_eval_runs_the_pipeline_and_writes_the_report(report_set: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "reports"
    assert main(["eval", "--dataset", str(report_set), "--out", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)

    pngs = {"eval_latency.png", "eval_categories.png", "eval_abstention.png"}  # abstention: the model scored
    assert {p.name for p in out.iterdir()} == {"eval.md", "eval.json"} | pngs
    for png in pngs:
        assert (out / png).read_bytes().startswith(b"\x89PNG")
    assert json.loads((out / "eval.json").read_text()) == result

    assert result["dataset"] == "report" and "qwen2.5-coder-0.5b" in result["models"]["llm"]
    first, follow_up, weather = result["questions"]
    # The table lookup: the gold chunk ranks first, the answer holds the figure, its citation the gold row.
    assert first["scores"]["hit_rate"] == 1.0 and first["scores"]["mrr"] == 1.0
    assert "8.15" in first["answer"] and first["scores"]["contains_answer"] == 1.0
    assert first["citations"] and all(c["supports"] for c in first["citations"])
    assert first["scores"]["citation_covers_gold"] == 1.0
    assert first["ragas"]["non_llm_context_recall"]["value"] == 1.0
    assert 0.0 < first["ragas"]["semantic_similarity"]["value"] <= 1.0
    # The follow-up ran in the same session, so it was rewritten into a standalone search.
    assert follow_up["search_query"] != follow_up["question"]
    assert "rewrite_ms" in follow_up["timings_ms"] and follow_up["scores"]["hit_rate"] is not None
    # The out-of-scope question: refused with no citations; answer metrics do not apply to it.
    assert weather["refused"] and not weather["citations"]
    assert weather["scores"]["refusal_accuracy"] == 1.0 and weather["scores"]["token_f1"] is None
    assert result["aggregates"]["refusal_accuracy"] == {"value": 1.0, "n": 1, "note": None}
    assert result["aggregates"]["faithfulness"]["value"] is None
    assert result["aggregates"]["faithfulness"]["note"].startswith("not run: judge none")
    assert result["latency_ms"]["total_ms"]["n"] == 3 and result["latency_ms"]["first_token_ms"]["p50"] > 0
    targets = [t["metric"] for t in result["targets"]]
    assert targets == ["refusal_accuracy", "false_refusal_rate", "citation_covers_gold"]

    markdown = (out / "eval.md").read_text()
    for heading in ("## Targets", "## Scores", "## RAGAS", "## By category", "## Latency (ms)", "## Per question"):
        assert heading in markdown
    assert "![latency](eval_latency.png)" in markdown and "| q2 | numeric |" in markdown


def test_compare_mode_runs_both_configurations_and_prints_deltas(home: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.md").write_text("# Safety\n\nFire drills take place on the first Tuesday of each month.\n")
    dataset = write_dataset(tmp_path, [{"dataset": "notes", "documents": ["notes.md"]}, OUT_OF_SCOPE])
    out = tmp_path / "compare"
    assert main(["eval", "--dataset", str(dataset), "--out", str(out), "--no-ragas", "--compare", "bm25_weight=1"]) == 0
    printed = capsys.readouterr().out
    assert "refusal_accuracy" in printed and "Δ" in printed
    comparison = json.loads((out / "eval.json").read_text())
    assert comparison["overrides"] == {"bm25_weight": "1"}
    assert comparison["base"]["settings"]["bm25_weight"] == 0.5
    assert comparison["variant"]["settings"]["bm25_weight"] == 1.0
    assert comparison["deltas"]["refusal_accuracy"] == {"base": 1.0, "variant": 1.0, "delta": 0.0}
    assert "# Evaluation comparison: notes" in (out / "eval.md").read_text()

    assert main(["eval", "--dataset", str(dataset), "--out", str(out), "--compare", "no_such_setting=1"]) == 2
    assert "unknown setting 'no_such_setting'" in capsys.readouterr().err


def test_eval_page_runs_an_uploaded_dataset(home: Path, tmp_path: Path) -> None:
    st.cache_resource.clear()  # no Session from another test's home
    notes = b"# Safety\n\nFire drills take place on the first Tuesday of each month.\n"
    rows = [
        {
            "id": "drills",
            "category": "factual",
            "question": "When do fire drills take place?",
            "reference": "the first Tuesday of each month",
            "gold": [{"source": "notes.md", "text": "Fire drills take place on the first Tuesday"}],
        },
        OUT_OF_SCOPE,
    ]
    dataset = "\n".join(json.dumps(row) for row in rows).encode()

    at = AppTest.from_string("from ui import eval_page\neval_page.render()", default_timeout=TIMEOUT_S).run()
    assert not at.exception
    assert at.radio[0].options[0].startswith("Starter set") and "Upload a dataset" in at.radio[0].options
    at.radio[0].set_value("Upload a dataset").run()
    assert any("Add one .jsonl dataset file" in i.value for i in at.info)
    at.file_uploader[0].set_value([("mine.jsonl", dataset, "application/json"), ("notes.md", notes, "text/markdown")])
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("2 questions (1 answerable)" in c.value and "notes.md" in c.value for c in at.caption)

    next(b for b in at.button if b.label == "Run evaluation").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    targets = at.dataframe[0].value
    assert targets.set_index("target").loc["refusal_accuracy", "value"] == 1.0
    scores = at.dataframe[1].value.set_index("metric")
    assert scores.loc["hit_rate", "value"] == 1.0
    questions = at.dataframe[-1].value.set_index("id")
    # The 0.5B answers the drills question (its sentence may leave out the date: a known limit of the
    # small model under the phrase-first form) and refuses the weather one.
    assert not questions.loc["drills", "refused"] and "drills" in questions.loc["drills", "answer"].lower()
    assert bool(questions.loc["weather", "refused"])
    assert len(at.get("image")) == 2
    assert {b.label for b in at.get("download_button")} == {"Download eval.md", "Download eval.json"}
    assert (home / "eval_reports" / "eval.md").is_file()


def test_eval_page_says_calmly_what_is_wrong_with_a_bad_upload(home: Path) -> None:
    st.cache_resource.clear()
    at = AppTest.from_string("from ui import eval_page\neval_page.render()", default_timeout=TIMEOUT_S).run()
    at.radio[0].set_value("Upload a dataset").run()
    at.file_uploader[0].set_value(("bad.jsonl", b'{"id": "a", "question": "Q?"}\n', "application/json")).run()
    assert not at.exception
    assert len(at.warning) == 1 and at.warning[0].value.startswith("Loading the dataset did not work:")
    assert "line 1: reference" in at.warning[0].value
    assert not [b for b in at.button if b.label == "Run evaluation"]


def test_a_small_local_judge_gives_scores_or_says_why_not(home: Path, tmp_path: Path) -> None:
    """RAGCHAT_EVAL_JUDGE=self: the 0.5B model judges its own answer through ragas. Small judges often
    reply with unusable JSON; either way the run finishes and each judged metric is a number in [0, 1]
    or None with the reason."""
    (tmp_path / "notes.md").write_text("# Safety\n\nFire drills take place on the first Tuesday of each month.\n")
    dataset = load_dataset(
        write_dataset(
            tmp_path,
            [
                {"dataset": "notes", "documents": ["notes.md"]},
                {
                    "id": "drills",
                    "question": "When do fire drills take place?",
                    "reference": "the first Tuesday of each month",
                    "gold": [{"source": "notes.md", "text": "Fire drills take place on the first Tuesday"}],
                },
            ],
        )
    )
    settings = get_settings(eval_judge="self", eval_judge_timeout_s=60, eval_judge_max_tokens=256)
    run = run_eval(dataset, settings, lambda s, llm: open_session(s, llm=llm))
    (question,) = run.questions
    assert not question.refused
    assert set(question.ragas) >= {"faithfulness", "answer_relevancy"}
    for name in ("faithfulness", "answer_relevancy"):
        outcome = question.ragas[name]
        assert (outcome.value is not None and 0.0 <= outcome.value <= 1.0) or (outcome.value is None and outcome.note)
        aggregate = run.aggregates[name]
        assert aggregate.n == (outcome.value is not None) and (aggregate.note is None) == (outcome.value is not None)
    assert "qwen2.5-coder-0.5b" in str(run.settings["ragas_judge"])
