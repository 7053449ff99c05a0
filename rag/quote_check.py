"""Whether the sentence a withheld answer points to answers the question, read from one token.

An answer none of whose sentences its evidence holds is withheld (rag/stages.py `CheckSupport`). Yet
the phrase the model first copied from the evidence often stands in a sentence that does answer: on
the real-documents set a third of the withheld answerable questions had copied the right figure or
name ("264,140", "Paris Precision, LLC") and then written a sentence the support check could not hold.
Quoting that sentence whatever it says would be as often a neighbouring row or figure as the answer,
so the sentence is put to the model alone with the question, under the answerability check's
trap-aware prompt, and one token is read: the quotation stands in for the refusal only when NONE's
probability stays under `none_share`. A model that gives no log-probabilities keeps the refusal.
"""

from __future__ import annotations

from collections.abc import Callable

from providers.llm.base import LLM, QueueListener
from rag.answer_format import one_token_p_none
from rag.prompting import build_quote_check_messages


class CheckQuotation:
    """P(NONE) of one sentence for a question, and whether a quotation of it may be shown."""

    def __init__(self, llm: Callable[[], LLM], none_share: float, top_logprobs: int) -> None:
        self._llm = llm
        self._none_share = none_share
        self._top_logprobs = top_logprobs

    def p_none(self, question: str, sentence: str, queue: QueueListener | None = None) -> float | None:
        """The model's P(NONE) for the sentence alone (None: no log-probabilities, or the call failed)."""
        llm = self._llm()
        if not llm.gives_logprobs:
            return None
        messages = build_quote_check_messages(question, sentence)
        return one_token_p_none(llm, messages, self._top_logprobs, queue, "quotation check")

    def accepts(self, p_none: float | None) -> bool:
        """A quotation is shown only when the model read the sentence and did not find it leaves the
        question open."""
        return p_none is not None and p_none < self._none_share
