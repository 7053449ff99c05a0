"""A yes/no question answered by the sentence that settles it, and one token of the model's.

Asked "Is a special flight permit needed?", the small models write "Yes" as their hidden answer
phrase whatever the evidence says (rag/answer_format.py): over the frozen eval/datasets/polar set
the 1.5B said yes to all 64 questions whose answer is yes and to 55 of the 68 whose answer is no,
and its phrase, not copied from the evidence, pushed the abstention score to refuse most of them.
Forbidding a bare Yes or No in the phrase did not help: it wrote "Yesbris", or the question's words.

So a yes/no question (rag/polar.py) takes another way. Each of the `sentences` evidence sentences
or table rows that bear most on it (the evidence picker's own ranking) is put to the model alone with
the question, and one token is read: Yes, No, or NONE when the sentence does not settle it; the
sentence it finds settles the question most is kept. NONE's share at or above `none_share` refuses.
Otherwise the answer is the quotation, opened by the verdict when the model leans clearly (No's
share of Yes and No below the first bound: yes; from the second: no) — `No. The document says: "…"
[2].` — and the quotation alone in between, where the 1.5B's verdicts were wrong as often as right:
the reader sees what settles it and where, and is never told a yes or no the model was unsure of.
No answer text of the model's is shown, and each prompt is a sentence long. A model that gives no
log-probabilities answers yes/no questions the ordinary way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from providers.llm.base import LLM, LLMError, Sampling
from rag.answer_format import NONE_TOKENS
from rag.answerability import Abstention
from rag.evidence import Embed, relevance
from rag.messages import message
from rag.prompting import build_polar_messages
from rag.question import QuestionState, elapsed_ms
from rag.quotes import quotable, quoted, trimmed

# The first word of a yes or a no in the languages answered (a verdict's, or the model's token).
YES_WORDS = frozenset({"yes", "oui", "ja", "sí", "si", "sim", "sì"})
NO_WORDS = frozenset({"no", "non", "nein", "não", "nao"})


@dataclass(frozen=True)
class YesNo:
    """The model's probabilities for its one token, renormalised over the three answers."""

    yes: float
    no: float
    none: float

    @classmethod
    def read(cls, alternatives: dict[str, float]) -> YesNo | None:
        """From the first token's top log-probabilities; None when none of the three is among them."""
        mass = {"yes": 0.0, "no": 0.0, "none": 0.0}
        for token, logprob in alternatives.items():
            word = token.strip()
            if word in NONE_TOKENS:
                mass["none"] += math.exp(logprob)
            elif word.lower() in YES_WORDS:
                mass["yes"] += math.exp(logprob)
            elif word.lower() in NO_WORDS:
                mass["no"] += math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            return None
        return cls(mass["yes"] / total, mass["no"] / total, mass["none"] / total)

    @property
    def no_share(self) -> float:
        """No's share of Yes and No."""
        return self.no / (self.yes + self.no) if self.yes + self.no > 0 else 0.0


class AnswerYesNo:
    """Stream the verdict and the quotation of the sentence that settles a yes/no question, or
    nothing when the model finds it unsettled (the stream's end then gives the refusal)."""

    def __init__(
        self,
        llm: Callable[[], LLM],
        embed: Embed,
        lexical_weight: float,
        none_share: float,
        verdict_bounds: tuple[float, float],
        sentences: int,
    ) -> None:
        """`sentences`: how many of the best-ranked sentences are each put to the model; the one it
        finds settles the question most (the lowest NONE share) is the answer's. `verdict_bounds`:
        No's share of Yes and No below the first says yes, from the second says no; in between only
        the sentence is quoted."""
        self._llm = llm
        self._sentences = sentences
        self._embed = embed
        self._lexical_weight = lexical_weight
        self._none_share = none_share
        self._yes_below, self._no_from = verdict_bounds

    def applies(self) -> bool:
        """Only a model that gives its tokens' log-probabilities can be read this way."""
        return self._llm().gives_logprobs

    def run(self, state: QuestionState) -> Iterator[str]:
        units = quotable(state.given.hits)
        scores = relevance(self._embed, state.question, [text for _, text in units], self._lexical_weight)
        best = np.argsort(-scores, kind="stable")[: self._sentences].tolist() if units else []
        started = time.perf_counter()
        read = [(units[i], self._judge(state, units[i][1])) for i in best]
        state.timings["first_token_ms"] = elapsed_ms(state.started)
        state.timings["generate_ms"] = elapsed_ms(started)
        settled = [(unit, judged) for unit, judged in read if judged is not None]
        if not settled:
            state.decision = Abstention(None, True, self._none_share, False, None, "yes_no")
            return
        (number, sentence), judged = min(settled, key=lambda pair: pair[1].none)
        refuse = judged.none >= self._none_share
        signals = {"p_yes": judged.yes, "p_no": judged.no, "p_none": judged.none}
        state.decision = Abstention(judged.none, refuse, self._none_share, False, signals, "yes_no")
        if refuse:
            return
        text = quoted(message(state.lang, "quote_opening"), number, trimmed(sentence, ""))
        if (verdict := self._verdict(judged)) is not None:
            text = f"{message(state.lang, verdict)}. {text}"
        state.timings["first_visible_ms"] = elapsed_ms(state.started)
        yield text

    def _verdict(self, judged: YesNo) -> str | None:
        """yes / no when the model leans clearly enough; None: the quotation alone."""
        if judged.no_share >= self._no_from:
            return "no"
        return "yes" if judged.no_share < self._yes_below else None

    def _judge(self, state: QuestionState, sentence: str) -> YesNo | None:
        sampling = Sampling(max_tokens=1, temperature=0.0, top_logprobs=20)
        try:
            token = self._llm().first_token(build_polar_messages(state.question, sentence), sampling, state.queue)
        except LLMError:
            return None
        return YesNo.read(token.alternatives) if token is not None else None
