"""The memory as the rest of ragchat sees it: the two Markdown files, the graph that writes them,
the log of writes, and the choice of entries that go into an answer's prompt."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from core.schemas import MemoryEvent, MemoryFacts, MemoryOutcome, MemoryUndo
from core.text import estimate_tokens
from memory.markdown_store import MemoryFile
from memory.memory_log import MemoryLog
from memory.preference_gate import PreferenceGate
from memory.prefilter import screen
from memory.relevance import has_word_table, speaks_of_self
from providers.llm.base import LLM

if TYPE_CHECKING:
    from core.settings import Settings
    from memory.graph import MemoryGraph
    from memory.sensitive_gate import MemoryGates

Embed = Callable[[list[str]], list[list[float]]]


class Memory:
    def __init__(
        self,
        files: dict[str, MemoryFile],
        log: MemoryLog,
        llm_factory: Callable[[], LLM],
        embed: Embed,
        context_tokens: int,
        related_similarity: float,
        gates: MemoryGates,
        update_similarity: float,
        relevant_similarity: float,
    ) -> None:
        self.files = files
        self._log = log
        self._llm_factory = llm_factory
        self._embed = embed
        self._context_tokens = context_tokens
        self._related_similarity = related_similarity
        self._gates = gates
        self._update_similarity = update_similarity
        self._relevant_similarity = relevant_similarity
        self._vectors: dict[str, np.ndarray] = {}  # entry text → unit vector (entries change rarely)
        self._last_question: tuple[str, np.ndarray] | None = None

    @classmethod
    def from_settings(
        cls,
        files: dict[str, MemoryFile],
        log: MemoryLog,
        llm_factory: Callable[[], LLM],
        embed: Embed,
        settings: Settings,
    ) -> Memory:
        """A Memory with the gates and thresholds of `settings`."""
        from memory.sensitive_gate import MemoryGates

        return cls(
            files,
            log,
            llm_factory,
            embed,
            settings.memory_context_tokens,
            settings.memory_related_similarity,
            MemoryGates.from_settings(settings),
            settings.memory_update_similarity,
            settings.memory_relevant_similarity,
        )

    @cached_property
    def _graph(self) -> MemoryGraph:
        from memory.graph import MemoryGraph  # LangGraph takes ~1.5 s to import: only when a fact is stated

        return MemoryGraph(
            self._llm_factory,
            self._embed,
            self.files,
            self._related_similarity,
            self._gates,
            self._update_similarity,
        )

    def facts(self) -> MemoryFacts:
        return MemoryFacts(user=self.files["USER"].entries(), company=self.files["COMPANY"].entries())

    def remember(self, message: str, session_id: str | None = None, lang: str = "en") -> MemoryOutcome:
        """Run the graph on the user's own message (never on answers or document text) and log its
        writes; `lang` is the message's language, which the lines are written in."""
        outcome = self._graph.run(message, lang)
        if outcome.writes:
            self._log.record(uuid.uuid4().hex, outcome.writes, session_id)
        return outcome

    def forget(self, entry: str) -> bool:
        """Delete an entry from whichever file holds it."""
        return any(file.delete(entry) for file in self.files.values())

    def last_turn(self) -> list[MemoryEvent]:
        return self._log.last_turn()

    def undo_last_turn(self) -> MemoryUndo:
        """Take back what the last turn that wrote to memory wrote: an added line is deleted, a
        replaced one put back in place (its History line goes). The turn leaves the log, so the one
        before it becomes the last (a second undo takes that back). A line edited or deleted by hand
        since is reported, not guessed at."""
        events = self._log.last_turn()
        outcome = MemoryUndo()
        for event in reversed(events):
            file = self.files[event.target]
            if event.action == "replaced" and event.replaced:
                done = file.restore(event.summary, event.replaced)
            else:
                done = file.delete(event.summary)
            (outcome.undone if done else outcome.not_found).append(event)
        if events and events[0].turn_id:
            self._log.forget_turn(events[0].turn_id)
        return outcome

    @staticmethod
    def may_hold_facts(message: str) -> bool:
        """Whether the graph runs after the answer: on every message with words in it, since the model
        judges what is a fact (a question may carry one: "As the DPO, do I sign off on …?"). It runs
        after the answer is shown, so it never delays it."""
        return any(ch.isalpha() for ch in message)

    @staticmethod
    def only_states_facts(message: str) -> bool:
        """The message states facts and asks nothing ("I'm a Project Finance Analyst."): the turn's
        routing (reply with what was noted instead of searching the documents), read by cheap rules
        before the answer; what is stored is decided by the model either way."""
        return screen(message).only_statements

    def closeness(self, question: str, facts: MemoryFacts) -> float:
        """The cosine similarity of the question, as asked or in the entries' third person ("What is my
        role?" → "What is the user's role?": 0.18 → 0.42 to "The user is the site safety officer"), to
        its closest memory entry."""
        entries = [*facts.user, *facts.company]
        return max(self._closeness(self._question_vectors(question), entries), default=0.0)

    def speaks_of_self(self, question: str, lang: str) -> bool:
        """Whether the question holds a first-person word of English or of `lang` (`memory.relevance`)."""
        return speaks_of_self(question, lang)

    def _question_vectors(self, question: str) -> np.ndarray:
        """The question's vectors, as asked and in the entries' third person; the last question's are
        kept, since its turn reads them twice (the entries for its prompt, then its closeness)."""
        last = self._last_question
        if last is None or last[0] != question:
            last = (question, self._unit_vectors(list(dict.fromkeys([question, in_third_person(question)]))))
            self._last_question = last
        return last[1]

    def _closeness(self, vectors: np.ndarray, entries: list[str]) -> list[float]:
        """Each entry's cosine to the closer of the question's vectors."""
        return [float(max(self._entry_vector(entry) @ v for v in vectors)) for entry in entries]

    @cached_property
    def _wish_gate(self) -> PreferenceGate:
        """The preference gate, reading the entries' cached vectors."""
        return PreferenceGate(
            lambda texts: [self._entry_vector(text).tolist() for text in texts], self._gates.preference
        )

    def states_wish(self, entry: str) -> bool:
        """The entry is a standing wish about answers ("The user prefers short answers.")."""
        return self._wish_gate.states_preference(entry)

    def _entry_vector(self, entry: str) -> np.ndarray:
        if entry not in self._vectors:
            self._vectors[entry] = self._unit_vectors([entry])[0]
        return self._vectors[entry]

    def _unit_vectors(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._embed(texts), dtype=np.float32)
        return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)

    def context_for(self, question: str, lang: str = "en") -> MemoryFacts:
        """The entries for an answer's prompt: the standing wishes about answers, and the facts when the
        question is about the user or their company (`memory.relevance`); the wishes first, then the
        facts closest in meaning to the question, while they fit the memory token budget (a few lines
        usually all fit)."""
        facts = self.facts()
        entries = [("USER", e) for e in facts.user] + [("COMPANY", e) for e in facts.company]
        if not entries:
            return MemoryFacts()
        wishes = [entry for entry in entries if self.states_wish(entry[1])]
        others = [entry for entry in entries if entry not in wishes]
        vectors = self._question_vectors(question)
        near = self._closeness(vectors, [e for _, e in others])
        about_self = (
            not has_word_table(lang)
            or speaks_of_self(question, lang)
            or max(near, default=0.0) >= self._relevant_similarity
        )
        ranked = [entry for _, entry in sorted(zip(near, others, strict=True), key=lambda pair: -pair[0])]
        chosen, used = [], 0
        for entry in wishes + (ranked if about_self else []):
            used += estimate_tokens(entry[1]) + 2
            if used > self._context_tokens:
                break
            chosen.append(entry)
        return MemoryFacts(
            user=[e for target, e in entries if ("USER", e) in chosen],
            company=[e for target, e in entries if ("COMPANY", e) in chosen],
        )


# An English question's first person in the memory entries' words ("The user …", "The company …").
_THIRD_PERSON = [
    (re.compile(r"\b(do|did|can|should|will|would|could) (i|we)\b", re.I), None),
    (re.compile(r"\bam i\b", re.I), "is the user"),
    (re.compile(r"\bare we\b", re.I), "is the company"),
    (re.compile(r"\bi'?m\b", re.I), "the user is"),
    (re.compile(r"\bwe'?re\b", re.I), "the company is"),
    (re.compile(r"\b(my|mine)\b", re.I), "the user's"),
    (re.compile(r"\b(our|ours)\b", re.I), "the company's"),
    (re.compile(r"\b(i|me|myself)\b", re.I), "the user"),
    (re.compile(r"\b(we|us|ourselves)\b", re.I), "the company"),
]


def in_third_person(question: str) -> str:
    for pattern, words in _THIRD_PERSON:  # words None: "do I" → "does the user", "can we" → "can the company"
        question = pattern.sub(_auxiliary if words is None else words, question)
    return question


def _auxiliary(match: re.Match[str]) -> str:
    verb = "does" if match.group(1).lower() == "do" else match.group(1)
    return f"{verb} {'the user' if match.group(2).lower() == 'i' else 'the company'}"
