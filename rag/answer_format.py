"""The shape of a grounded reply, and reading it as it streams.

The model writes three lines: first the shortest phrase of the evidence that answers the question,
or NONE; then the answer, every sentence ending in the marker of the evidence that states it; then
what the question asks that the evidence does not state, or NONE:

    Phrase: 14 March 1998
    Answer: The plant opened on 14 March 1998 [3].
    Missing: who built it

Only the answer line is shown; a Missing part becomes a closing "The documents do not say who built
it." The phrase line gives the abstention score its signals for free: how likely the model's first
token was NONE (SQuAD 2.0's unanswerable questions reuse the evidence's words, so the model has to
decide "is this stated?" before it commits to a phrase), how sure it was of the words it copied, and
whether they are really in the evidence. For the embedded model a GBNF grammar enforces the shape,
so the markers are the model's own and always name given evidence, and the Missing line is always
there to fill.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from core.text import tokenize
from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener, Sampling, Token

log = logging.getLogger(__name__)

NONE = "NONE"
PHRASE, ANSWER, MISSING = "Phrase:", "Answer:", "Missing:"
UNCOVERED_OPENING = "The documents do not say"
NONE_TOKENS = ("NONE", "NON", "None", "none")
_MARKER = re.compile(r"\[\d+\]")
# A Missing line must take at least this share of its content words from the question.
MISSING_MIN_QUESTION_SHARE = 0.6
# Question and function words that open a Missing clause, lower-cased after "The documents do not say".
_LOWER_FIRST = frozenset("who whom whose what when where which why how whether if the a an its their his her".split())


# A sentence: text that does not start in lower case (a small model otherwise runs on after a
# marker: "… data [1]. and provides …"), then its markers, before or after its closing . ! ? — and
# a . ! ? followed by a space and a capital (a new sentence) only after markers, so every sentence
# gets its own. 3.5 is not a sentence end, nor are initials (U.S., U.K.: capitals each followed by a
# full stop, then maybe a space), so "U.S. registry" and "U.S.-registered" are written as they stand;
# a rule without them made the model write "U..S.registry", which no passage holds. Any other path
# from a full stop to a space traps a model that meant to start a new sentence there: allowed a space
# and a lower-case letter ("e.g. the"), the 0.5B wrote "uto. uto. …" instead of the marker, and
# allowed spaced initials ("J. R. R."), ". D. 1. D. 1. …".
SENTENCE_START = "[^a-z \\n\\[\\].!?]"
INITIALS_RULE = 'initials ::= "." [A-Z] "." ([A-Z] ".")* " "?'  # after the first capital: ".S. "


def _char_rule(excluded: str = "") -> str:
    """The rule for a character inside a sentence (and its initials rule), never one of `excluded`."""
    return f"char ::= [^\\[\\]\\n.!?{excluded}] | [.!?] [^ \\n\\[\\]A-Z{excluded}] | initials\n{INITIALS_RULE}"


# CJK punctuation, kana, ideographs, hangul and full-width forms (literal code points: llama.cpp reads
# the grammar as UTF-8). The Qwen models slip Chinese words into English and French answers ("… for the
# next day.此外, the models …"); an answer is kept out of these scripts unless its question or its
# evidence is in Chinese, Japanese or Korean.
CJK_CHARS = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})


def without_cjk(question_lang: str, evidence_langs: Iterable[str]) -> bool:
    """Whether an answer's grammar may leave CJK characters out: neither question nor evidence uses them."""
    return question_lang not in CJK_LANGUAGES and not CJK_LANGUAGES.intersection(evidence_langs)


def sentence_rules(no_cjk: bool) -> tuple[str, str]:
    """The sentence start class and the char rule, without CJK characters when `no_cjk`."""
    if not no_cjk:
        return SENTENCE_START, _char_rule()
    start = SENTENCE_START[:-1] + CJK_CHARS + "]"
    return start, _char_rule(CJK_CHARS)


def answer_grammar(ids: list[int], max_sentences: int = 4, phrase_chars: int = 120, no_cjk: bool = False) -> str:
    """GBNF for the reply: a phrase line, sentences each ending in markers from `ids`, and the Missing
    line. The phrase may not be NONE: the model always commits to its best phrase, and how likely it
    was to write NONE instead (its raw log-probabilities, which the grammar does not change) goes
    into the abstention score, whose threshold decides. A NONE the model chose itself would be a
    refusal no strictness level could overrule.

    The answer is not bound to hold the phrase: a grammar that made the first sentence contain it
    word for word trapped the 1.5B whenever its sentence worded the phrase otherwise ("Denmark,
    Norway, and …" for the phrase "Denmark, Norway, …"), and it wrote on until its token limit."""
    cite = " | ".join(f'"{n}"' for n in ids)
    start, char = sentence_rules(no_cjk)
    more = max(max_sentences - 1, 0)
    tail = phrase_chars - 4
    return "\n".join(
        [
            # The space after "Phrase:" is optional, so the model's own " word" token fits.
            f'root ::= "{PHRASE}" " "? phrase "\\n{ANSWER} " answer "\\n{MISSING} " ("{NONE}" | line)',
            # Any line but one that starts with NONE (or a space).
            'phrase ::= [^\\n\\[\\]N ] tail | "N" ([^\\n\\[\\]O] tail)? | "NO" ([^\\n\\[\\]N] tail)? '
            '| "NON" ([^\\n\\[\\]E] tail)?',
            f"tail ::= [^\\n\\[\\]]{{0,{tail}}}",
            f"line ::= [^\\n\\[\\]]{{1,{phrase_chars}}}",
            f'answer ::= sentence (" " sentence){{0,{more}}}',
            f'sentence ::= {start} char* [.!?]? (" "? cite)+ [.!?]?',
            char,
            f'cite ::= "[" ({cite}) "]"',
        ]
    )


def phrase_of(head: str) -> str:
    """The phrase of a reply's first line, "Phrase: 14 March 1998" → "14 March 1998"."""
    return head.strip().split("\n", 1)[0][len(PHRASE) :].strip()


def none_probability(alternatives: dict[str, float]) -> float | None:
    """P(the first token is NONE), from the first token's top log-probabilities (None: not given)."""
    if not alternatives:
        return None
    return min(sum(math.exp(lp) for token, lp in alternatives.items() if token.strip() in NONE_TOKENS), 1.0)


def one_token_p_none(
    llm: LLM, messages: list[ChatMessage], top_logprobs: int, queue: QueueListener | None, purpose: str
) -> float | None:
    """P(NONE) of the model's one-token reply to `messages` (a check's judgment); None when the call
    failed (logged with `purpose`) or gave no log-probabilities: the caller's decision then stands."""
    sampling = Sampling(max_tokens=1, temperature=0.0, top_logprobs=top_logprobs)
    try:
        token = llm.first_token(messages, sampling, queue)
    except LLMError as exc:
        log.warning("%s failed: %s", purpose, exc)
        return None
    return none_probability(token.alternatives) if token is not None else None


@dataclass
class Reply:
    """What the stream said, beyond the visible text."""

    phrase: str | None = None  # the first line; NONE means the model found no answer
    p_none: float | None = None  # P(NONE) where the phrase starts
    phrase_logprobs: list[float] = field(default_factory=list)  # the model's log-probability of each phrase token
    visible: list[str] = field(default_factory=list)
    tail: str = ""  # what followed the answer line: "Missing: …"

    @property
    def said_none(self) -> bool:
        return self.phrase is not None and self.phrase.strip().upper().startswith(NONE)

    @property
    def text(self) -> str:
        return "".join(self.visible)

    @property
    def missing(self) -> str | None:
        """What the question asks that the evidence does not state (None: nothing, or not said)."""
        line = self.tail.strip()
        if not line.startswith(MISSING):
            return None
        part = line[len(MISSING) :].strip().rstrip(".").strip()
        return None if not part or part.upper().startswith(NONE) else part

    def uncovered(self, question: str, opening: str = UNCOVERED_OPENING) -> str | None:
        """The closing sentence for the part of the question the documents do not cover, after
        `opening` (rag/messages.py's, in the question's language). A Missing line that is not about
        the question (most of its words are not the question's) is dropped: a small model sometimes
        fills it with a phrase of the evidence."""
        part = self.missing
        if not part:
            return None
        words = set(tokenize(part))
        if not words or len(words & set(tokenize(question))) < MISSING_MIN_QUESTION_SHARE * len(words):
            return None
        first, _, rest = part.partition(" ")
        if first.lower() in _LOWER_FIRST:
            part = " ".join(filter(None, [first.lower(), rest]))
        return f"{opening} {part}."


class _PhraseReader:
    """Follows the hidden head ("Phrase: … \nAnswer: ") token by token."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.head = ""
        self._space: tuple[float, float] | None = None  # (P(NONE), P(lone space)) when a space came first

    def in_form(self) -> bool:
        return PHRASE.startswith(self.head.lstrip()[: len(PHRASE)])

    def read(self, token: Token) -> None:
        in_phrase = self.head.lstrip().startswith(PHRASE) and "\n" not in self.head
        if in_phrase and token.text.strip() and "\n" not in token.text and token.logprob is not None:
            self.reply.phrase_logprobs.append(token.logprob)
        if in_phrase and self.reply.p_none is None:
            here = none_probability(token.alternatives)
            if self._space is not None:  # P(space) · P(NONE | space), plus NONE with its own space
                self.reply.p_none = min(self._space[0] + self._space[1] * (here or 0.0), 1.0)
            elif not token.text.strip() and token.alternatives:
                self._space = (here or 0.0, math.exp(token.alternatives.get(token.text, -math.inf)))
            else:
                self.reply.p_none = here
        self.head += token.text

    def answer_start(self) -> str | None:
        """The visible text after "Answer:" once the head is complete, else None."""
        if "\n" not in self.head or ANSWER not in self.head.split("\n", 1)[1]:
            return None
        self.reply.phrase = phrase_of(self.head)
        return self.head.split("\n", 1)[1].split(ANSWER, 1)[1].lstrip()

    def ended(self) -> None:
        """The reply ended inside its head: "Phrase: NONE", or a phrase with no answer after it."""
        if self.head.strip().startswith(PHRASE):
            self.reply.phrase = phrase_of(self.head)


def read_reply(tokens: Iterator[Token], reply: Reply) -> Iterator[Token]:
    """Yield only the visible answer (after "Answer:"), starting with a token, maybe empty, as soon as
    the head is read; fill `reply` with the hidden phrase, P(NONE) at its first token and its
    tokens' log-probabilities. A provider that ignored the form (no
    "Phrase:" at the start) is shown as it wrote it; one that wrote "Phrase: NONE" shows nothing."""
    reader = _PhraseReader(reply)
    newline = ""
    for token in tokens:
        reader.read(token)
        if not reader.in_form():  # not our form: all of it is the answer
            reply.visible.append(reader.head)
            yield Token(text=reader.head)
            break
        visible = reader.answer_start()
        if visible is not None:
            visible, newline, reply.tail = visible.partition("\n")
            if visible:
                reply.visible.append(visible)
            yield Token(text=visible)  # even empty: the head is read, the caller may stop here
            break
    else:
        reader.ended()
        return
    started = bool(reply.visible)
    line_ended = bool(newline)
    for token in tokens:
        if line_ended:  # the answer line is over: the rest is the Missing line
            reply.tail += token.text
            continue
        if "\n" in token.text:
            shown, _, reply.tail = token.text.partition("\n")
            line_ended = True
            if shown.strip() and started:
                reply.visible.append(shown)
                yield Token(text=shown)
            continue
        if not started:  # the answer's first words: no space left over from "Answer: "
            token = Token(text=token.text.lstrip(), logprob=token.logprob, alternatives=token.alternatives)
            if not token.text:
                continue
            started = True
        reply.visible.append(token.text)
        yield token


def says_not_covered(text: str) -> bool:
    """An answer that opens with "The documents do not say" answers nothing: it is a refusal."""
    return text.strip().lower().startswith(UNCOVERED_OPENING.lower())
