"""A yes-or-no judgment from the memory model, as the probability of "Yes".

A model that takes a grammar and gives log-probabilities answers with one token, Yes or No, and the
share of "Yes" among the two is the score: it ranks far better than the model's own JSON answer (the
1.5B's P(Yes) separated requests to remember at ROC AUC 0.91 where its JSON answer was wrong), and a
threshold calibrated per model turns it into a decision. Any other model answers {"answer": true|false}
in JSON, read as 1.0 or 0.0.
"""

from __future__ import annotations

import json
import math

from providers.llm.base import LLM, ChatMessage, LLMError, Sampling

_ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "boolean"}}, "required": ["answer"]}


def answers_by_logprobs(llm: LLM) -> bool:
    return llm.constrains and llm.gives_logprobs


def calibrated_threshold(llm: LLM, thresholds: dict[str, float], for_json: float) -> float | None:
    """The P(Yes) threshold of this model, from `thresholds` (model name → threshold; the name is looked
    for in the model's label); `for_json` for a model that answers in JSON; None for a model with
    log-probabilities nobody calibrated (the judgment is then not made on it)."""
    if not answers_by_logprobs(llm):
        return for_json
    label = llm.label.lower()
    return next((value for name, value in thresholds.items() if name.lower() in label), None)


def yes_probability(llm: LLM, instruction: str, text: str) -> float:
    """P("Yes") of the model's first answer token to `instruction` about `text`, Yes and No only, or the
    JSON answer as 1.0 / 0.0. Raises LLMError."""
    messages = [ChatMessage(role="system", content=instruction), ChatMessage(role="user", content=text)]
    if not answers_by_logprobs(llm):
        try:
            return 1.0 if json.loads(llm.complete_json(messages, _ANSWER_SCHEMA, max_tokens=12)).get("answer") else 0.0
        except (ValueError, AttributeError) as exc:
            raise LLMError(f"the reply was not a yes-or-no JSON answer ({exc})") from exc
    sampling = Sampling(max_tokens=1, temperature=0.0, grammar='root ::= "Yes" | "No"', top_logprobs=10)
    token = next(iter(llm.stream_tokens(messages, sampling)))
    share = {"yes": 1e-12, "no": 1e-12}
    for alternative, logprob in token.alternatives.items():  # "Yes", " Yes", "yes" … all count
        if alternative.strip().lower() in share:
            share[alternative.strip().lower()] += math.exp(logprob)
    return share["yes"] / (share["yes"] + share["no"])
