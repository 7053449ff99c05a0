"""The memory model's step: condense one candidate statement into a MemoryDecision, with decoding
constrained to the decision's JSON schema, then check the decision against the statement itself.

Measured with the 0.5B model (qwen2.5-coder-0.5b, temperature 0): without examples it copied the
prompt's example into unrelated messages ("I love pizza" → "User is a data engineer."); with the
examples below it condensed the test phrases, but still dropped details now and then ("My manager is
Anna Schmidt." → "User is Anna Schmidt."; "Every Monday morning I run a batch job…" lost "Every
Monday morning"). So the summary is checked against the message both ways: one that brings in words
the user did not say is not written, and one that drops words the user said is replaced by the
rule-based third-person rewrite of the message (memory/third_person.py), which keeps them all.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from core.schemas import MemoryDecision
from memory.dedup import significant_terms
from memory.prefilter import Statement
from memory.third_person import third_person
from providers.llm.base import LLM, ChatMessage, LLMError

MAX_NEW_TERMS = 1  # e.g. "their" for "our"; more means the model made something up
# First-person words the summary rightly leaves out ("my manager" → "User's manager").
_PRONOUN_TERMS = {"i'm", "im", "my", "me", "mine", "us", "our", "we", "i", "i'v", "i'd", "i'll", "we'r", "we'v"}

SYSTEM_PROMPT = """You extract one lasting fact from a chat message, to remember in later conversations.
Worth remembering: the user's job, team, employer, location, standing preferences, recurring routines; \
their company's infrastructure, tools, policies, recurring meetings.
Not worth remembering: greetings, questions, small talk, the weather, moods, food, hobbies, vague or \
one-off remarks.
Reply in JSON. summary is one short third-person sentence that starts with "User" or "Company", keeps \
every detail (who, what, when, how often) and uses only words from the message.

Message: I'm a data engineer.
{"should_write": true, "target": "USER", "summary": "User is a data engineer.", "confidence": 0.95}
Message: Every Friday I send the sales report to my manager.
{"should_write": true, "target": "USER", "summary": "User sends the sales report to their manager every \
Friday.", "confidence": 0.9}
Message: Our team deploys on Kubernetes.
{"should_write": true, "target": "COMPANY", "summary": "Company deploys on Kubernetes.", "confidence": 0.9}
Message: I really enjoy sushi.
{"should_write": false, "target": "none", "summary": "", "confidence": 0.3}
Message: I feel a bit tired.
{"should_write": false, "target": "none", "summary": "", "confidence": 0.2}"""

# Kept to what llama.cpp's JSON-schema grammar, Ollama's `format` and OpenAI's json_schema all accept.
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "should_write": {"type": "boolean"},
        "target": {"enum": ["USER", "COMPANY", "none"]},
        "summary": {"type": "string", "maxLength": 200},
        "confidence": {"type": "number"},
    },
    "required": ["should_write", "target", "summary", "confidence"],
}
_PREFIX = {"USER": "User", "COMPANY": "Company"}


class Rejected(Exception):
    """The statement is not written; the message says why."""


def analyze(llm: LLM, statement: Statement) -> MemoryDecision:
    messages = [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=f"Message: {statement.text}"),
    ]
    try:
        reply = llm.complete_json(messages, DECISION_SCHEMA, max_tokens=120)
        return MemoryDecision.model_validate_json(reply)
    except LLMError as exc:
        raise Rejected(f"the memory model failed ({exc})") from exc
    except ValidationError as exc:
        raise Rejected(f"the memory model's reply was not a valid decision ({exc.error_count()} errors)") from exc


def checked_summary(decision: MemoryDecision, statement: Statement, min_confidence: float) -> tuple[str, str]:
    """The line to write and how it was made ("model" or "rules"), or Rejected with the reason.

    The target comes from the statement (the rules read who the subject is); the 0.5B model filed
    "We hold team meetings every Friday" under USER.
    """
    if not decision.should_write or decision.target == "none" or not decision.summary.strip():
        raise Rejected("the memory model found no lasting fact")
    if decision.confidence < min_confidence:
        raise Rejected(f"confidence {decision.confidence:.2f} is below {min_confidence:.2f}")
    summary = _addressed(decision.summary, statement)
    said = significant_terms(statement.text) - _PRONOUN_TERMS
    if summary is not None:
        written = significant_terms(summary)
        if len(written - said) > MAX_NEW_TERMS:
            raise Rejected(f"the summary adds words the message did not say ({', '.join(sorted(written - said))})")
        if not said - written:
            return summary, "model"
    return third_person(statement.text, statement.target), "rules"


def _addressed(raw: str, statement: Statement) -> str | None:
    """The model's summary starting with the statement's subject ("User …" / "Company …"), or None
    when it is not a third-person sentence."""
    summary = " ".join(raw.split())
    if summary.lower().startswith(("the user", "the company")):
        summary = summary[4:]
    head, _, rest = summary.partition(" ")
    subject = head.rstrip(":,")
    if subject.removesuffix("'s").capitalize() not in _PREFIX.values() or not rest:
        return None
    possessive = "'s" if subject.endswith("'s") else ""
    summary = f"{_PREFIX[statement.target]}{possessive} {rest}".strip()
    return summary if summary.endswith((".", "!")) else summary + "."
