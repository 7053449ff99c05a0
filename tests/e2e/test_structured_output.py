"""JSON-schema constrained replies (what the memory graph relies on) from the real 0.5B model, in
process and through the OpenAI-compatible HTTP API of xllamacpp's own server."""

from __future__ import annotations

import pytest

from core.settings import get_settings
from memory.extractor import FACTS_SCHEMA, SYSTEM_PROMPT, FactList
from providers.llm.base import LLM, ChatMessage, LLMError
from providers.llm.factory import resolve_gguf
from providers.llm.llamacpp import LlamaCppLLM
from providers.llm.openai_compat import OpenAICompatLLM
from tests.conftest import TEST_LLM

MESSAGES = [
    ChatMessage(role="system", content=SYSTEM_PROMPT),
    ChatMessage(role="user", content="Message: Our company just migrated from AWS to GCP last quarter."),
]


@pytest.fixture(scope="module")
def llamacpp() -> LlamaCppLLM:
    path, label = resolve_gguf(TEST_LLM, get_settings().model_dir)
    return LlamaCppLLM(path, label)


def _decide(llm: LLM) -> FactList:
    return FactList.model_validate_json(llm.complete_json(MESSAGES, FACTS_SCHEMA, max_tokens=120))


def test_in_process_reply_follows_the_schema(llamacpp: LlamaCppLLM) -> None:
    facts = _decide(llamacpp).facts
    assert any(f.target == "COMPANY" and "GCP" in f.statement for f in facts)


def test_openai_compatible_reply_follows_the_schema(llamacpp: LlamaCppLLM) -> None:
    served = OpenAICompatLLM(f"{llamacpp.listening_address}/v1", model=TEST_LLM)
    assert _decide(served) == _decide(llamacpp)  # the same model at temperature 0, the same decision
    with pytest.raises(LLMError):
        OpenAICompatLLM("http://127.0.0.1:9/v1", model="x", timeout_s=2).complete_json(MESSAGES, FACTS_SCHEMA, 8)
