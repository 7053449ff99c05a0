"""A stored conversation as Markdown: each question, its answer with [n] markers, the sources those
markers point to (file, page, locator, supporting sentence), and what the checks said. The same text
is the app's download and `ragchat history export`."""

from __future__ import annotations

from core.schemas import Answer
from rag.citations import citation_note
from rag.conversations import SessionSummary

LOW_CONFIDENCE_NOTE = "Low confidence: the cited sources support only part of this answer."


def conversation_markdown(summary: SessionSummary, turns: list[Answer]) -> str:
    updated = summary.updated_at.strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# {_one_line(summary.title)}",
        "",
        f"Conversation `{summary.session_id}` · {summary.turns} turn{'s' if summary.turns != 1 else ''} · "
        f"last updated {updated} · exported from ragchat",
        "",
    ]
    for number, turn in enumerate(turns, start=1):
        lines += [f"## {number}. {_one_line(turn.question)}", "", *_quote(turn.question), ""]
        lines += _answer_lines(turn)
    return "\n".join(lines).rstrip() + "\n"


def _answer_lines(turn: Answer) -> list[str]:
    if turn.guardrail is not None:
        return [f"**Not answered** ({turn.guardrail.rule.replace('_', ' ')} guardrail): {turn.guardrail.message}", ""]
    lines = [f"**Answer:** {turn.answer}", ""]
    if turn.incomplete:
        lines += [f"_The model stopped before finishing: {turn.error}_", ""]
    if turn.citations:
        lines.append("**Sources:**")
        lines.append("")
        for c in turn.citations:
            how = f" ({note})" if (note := citation_note(c)) else ""
            lines.append(f"- [{c.marker}] {c.source}, {c.locator}{how}: “{_one_line(c.snippet)}”")
        lines.append("")
    flagged = turn.unsupported_sentences
    if flagged:
        lines.append("**Not supported by the cited sources:**")
        lines.append("")
        lines += [f"- {sentence}" for sentence in flagged]
        lines.append("")
    if turn.low_confidence:
        lines += [f"_{LOW_CONFIDENCE_NOTE}_", ""]
    if turn.memory_note and turn.memory_note != turn.answer:
        lines += [f"_{turn.memory_note}_", ""]
    asked = "first_token_ms" in turn.timings_ms or not turn.refused
    facts = [f"model: {turn.models.llm}" if asked else "no passage was relevant enough; the model was not asked"]
    if turn.confidence is not None:
        facts.insert(0, f"confidence {turn.confidence:.2f}")
    if "total_ms" in turn.timings_ms:
        facts.append(f"{turn.timings_ms['total_ms'] / 1000:.1f} s")
    if turn.search_query != turn.question:
        facts.append(f"searched for: {_one_line(turn.search_query)}")
    return [*lines, f"<sub>{' · '.join(facts)}</sub>", ""]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""]]
