"""llama.cpp keeps earlier prompts' states in RAM to reuse them; RAGCHAT_LLM_CACHE_RAM_MIB bounds that
cache. Left at llama.cpp's own 8 GiB, the process grew ~10 MiB with every distinct ~800-token prompt on
the 0.5B, for as long as it ran (bench/soak.py found it)."""

from __future__ import annotations

import random

from bench.rss_sampler import rss_mib
from core.settings import get_settings
from providers.llm.base import ChatMessage
from providers.llm.factory import build_llm
from tests.conftest import TEST_LLM

WORDS = "warehouse pallet invoice shipment harbour forklift audit schedule refund courier".split()


def distinct_prompt(rng: random.Random) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=" ".join(rng.choice(WORDS) for _ in range(700)))]


def test_the_prompt_cache_stays_within_its_setting() -> None:
    llm = build_llm(get_settings(llm_provider="llamacpp", llm_model=TEST_LLM, llm_cache_ram_mib=10))
    rng = random.Random(7)
    llm.complete(distinct_prompt(rng), 1, 0.0)  # the first fills the slot and the 10 MiB
    before = rss_mib()
    for _ in range(3):
        llm.complete(distinct_prompt(rng), 1, 0.0)
    # Three more distinct prompts: ~30 MiB kept without the bound (~10 MiB each, measured), ~0 with it.
    assert rss_mib() - before < 15
