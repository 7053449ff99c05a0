"""The memory graph (LangGraph): screen → extract → dedup → write.

screen    the secret veto on the whole message (a message holding a secret never reaches the model),
          then the gate (memory/fact_gate.py): a message that holds no lasting fact costs no model call,
          nor one that only asks or supposes (memory/asked.py), unless it states a wish for answers
extract   the LLM lists the message's lasting facts as third-person statements, each with its file
          (JSON-schema constrained; memory/extractor.py); where it lists none and the message states
          how the user wants answers (memory/preference_gate.py), it is asked for that wish; each
          checked: nothing the user did not say, third person, no secret, sensitive only when asked;
          filed by the person of the message clause it restates (memory/speaker.py)
dedup     against the target file's entries: repeat → skip, new value of a known fact → replace (rules
          and embeddings, memory/dedup.py); a new line near an entry that the rules did not settle, or
          that the rules would replace it with, is put to the model beside it: the same fact in other
          words (memory/same_fact.py; skipped), a change of it, or another fact; a line that changes no
          stored fact must be a lasting one (memory/lasting_gate.py)
write     atomic edits of USER_MEMORY.md / COMPANY_MEMORY.md under a file lock; a replaced line goes
          to the file's dated History section

Each step ends the run early when nothing is left to do.
The input is only the user's own message; answers and document text never enter this graph.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from core.schemas import MemoryFact, MemoryOutcome, MemorySkip, MemoryWrite
from core.secrets import find_secret
from memory.asked import said_part
from memory.dedup import DedupResult, canonical_times, compare, different_slots
from memory.extractor import (
    FirstPerson,
    NotAbout,
    Rejected,
    as_company,
    checked,
    extract,
    relation,
    restate,
    standing_wish,
    with_company_subject,
)
from memory.fact_gate import FactGate
from memory.lasting_gate import NOT_LASTING, LastingGate
from memory.markdown_store import MemoryFile
from memory.preference_gate import PreferenceGate
from memory.same_fact import same_probability, same_threshold
from memory.sensitive_gate import WITHHELD, MemoryGates, SensitiveGate
from memory.speaker import owner, source_clause
from providers.llm.base import LLM, LLMError


class _Candidate(TypedDict):
    fact: MemoryFact
    replaces: str | None


class MemoryState(TypedDict, total=False):
    message: str
    lang: str  # the message's language (ISO 639-1): the lines are written in it
    screened: bool
    candidates: list[_Candidate]
    writes: list[MemoryWrite]
    skipped: list[MemorySkip]


class MemoryGraph:
    def __init__(
        self,
        llm_factory: Callable[[], LLM],
        embed: Callable[[list[str]], list[list[float]]],
        files: dict[str, MemoryFile],
        related_similarity: float,
        gates: MemoryGates,
        update_similarity: float,
    ) -> None:
        self._gate = FactGate(embed, gates.fact)
        self._lasting = LastingGate(embed, gates.lasting)
        self._preference = PreferenceGate(embed, gates.preference)
        self._same_thresholds = gates.same
        self._sensitive = SensitiveGate(embed, llm_factory, gates)
        self._llm_factory = llm_factory
        self._embed = embed
        self._files = files
        self._related_similarity = related_similarity
        self._update_similarity = update_similarity
        graph = StateGraph(MemoryState)
        graph.add_node("screen", self._screen)
        graph.add_node("extract", self._extract)
        graph.add_node("dedup", self._dedup)
        graph.add_node("write", self._write)
        graph.add_edge(START, "screen")
        graph.add_conditional_edges("screen", _next_if("screened", "extract"))
        graph.add_conditional_edges("extract", _next_if("candidates", "dedup"))
        graph.add_conditional_edges("dedup", _next_if("candidates", "write"))
        graph.add_edge("write", END)
        self._graph = graph.compile()

    def run(self, message: str, lang: str = "en") -> MemoryOutcome:
        state = self._graph.invoke({"message": message, "lang": lang, "writes": [], "skipped": []})
        return MemoryOutcome(writes=state.get("writes", []), skipped=state.get("skipped", []))

    def _screen(self, state: MemoryState) -> MemoryState:
        message = state["message"]
        if secret := find_secret(message):
            return {"screened": False, "skipped": [MemorySkip(text=message[:80], reason=f"it holds {secret}")]}
        if not self._gate.holds_fact(message):
            return {"screened": False, "skipped": [MemorySkip(text=message[:80], reason="no lasting fact in it")]}
        # What a message only asks is never kept (memory/extractor.py `checked`): no model call for it.
        if not said_part(message, state["lang"]).strip() and not self._preference.states_preference(message):
            return {"screened": False, "skipped": [MemorySkip(text=message[:80], reason="it only asks")]}
        return {"screened": True}

    def _extract(self, state: MemoryState) -> MemoryState:
        message, lang = state["message"], state["lang"]
        skipped = list(state["skipped"])
        try:
            facts = extract(self._model(), message, lang)
            if not facts and self._preference.states_preference(message):
                facts = standing_wish(self._model(), message, lang)
        except Rejected as rejected:
            return {"candidates": [], "skipped": [*skipped, MemorySkip(text=message[:80], reason=str(rejected))]}
        if not facts:
            skipped.append(MemorySkip(text=message[:80], reason="no lasting fact about you or your company"))
        candidates: list[_Candidate] = []
        wish = bool(facts) and self._preference.states_preference(message)
        for fact in facts:
            try:
                fact = self._checked(fact, message, lang, wish)
            except Rejected as rejected:
                skipped.append(MemorySkip(text=fact.statement[:80], reason=str(rejected)))
                continue
            if fact.target == "USER" and self._sensitive.withheld(message, fact.statement):
                skipped.append(MemorySkip(text=fact.statement[:80], reason=WITHHELD))
                continue
            candidates.append({"fact": fact, "replaces": None})
        return {"candidates": candidates, "skipped": skipped}

    def _model(self) -> LLM:
        """The memory model. One that cannot be loaded (a missing GGUF, a server gone) leaves the
        message's facts unstored with the reason, as a failed reply does, instead of failing the turn."""
        try:
            return self._llm_factory()
        except LLMError as exc:
            raise Rejected(f"the memory model could not be loaded ({exc})") from exc

    def _checked(self, fact: MemoryFact, message: str, lang: str, wish: bool = False) -> MemoryFact:
        """The fact checked against the message, filed by whose clause it restates (memory/speaker.py).

        A statement the model copied in the first person (the 0.5B does: "We deploy every release with
        Terraform.") is given back to it, once, to be rewritten in the third person; so is the clause,
        said in the first person, that a subjectless statement came from ("our busiest month is
        December" → "The busiest month is December."); a COMPANY statement from a clause in no
        one's person is given back to get the company as its subject ("The fiscal year ends on 31
        March."). A USER line restating what the message said of the company gets the company as its
        subject. `wish`: the message states how the user wants answers, so its requests ("give me
        bullet points from now on") are what it says (memory/asked.py)."""
        check = functools.partial(checked, wish=wish)
        try:
            fact = check(fact, message, lang)
        except FirstPerson:
            fact = check(restate(self._model(), fact, lang), message, lang)
        except NotAbout:
            clause = source_clause(fact.statement, message, lang)
            if clause is None or clause.asked:
                raise
            if clause.owner is not None:
                said = MemoryFact(target=clause.owner, statement=clause.text)
                fact = check(restate(self._model(), said, lang), message, lang)
            elif fact.target == "COMPANY":
                fact = check(with_company_subject(self._model(), fact, lang), message, lang)
            else:
                raise
        if fact.target == "USER" and owner(fact.statement, message, lang) == "COMPANY":
            fact = check(as_company(fact), message, lang)
        return fact

    def _dedup(self, state: MemoryState) -> MemoryState:
        kept: list[_Candidate] = []
        skipped = list(state["skipped"])
        known: dict[str, list[str]] = {target: file.entries() for target, file in self._files.items()}
        for candidate in state["candidates"]:
            fact = candidate["fact"]
            result = compare(fact.statement, known[fact.target], self._embed, self._related_similarity)
            near = result.match if result.action == "replace" else result.nearest
            # The rules replace an entry when the new line has words the old one lacks, which a rewording
            # also has ("HQ" → "head office"); a near entry they did not settle may be either.
            if near and (
                result.action == "replace"
                or (result.similarity >= self._update_similarity and not different_slots(fact.statement, near))
            ):
                result = self._judged(result, near, fact.statement)
            if result.action == "duplicate":
                skipped.append(MemorySkip(text=fact.statement, reason=f"already remembered: {result.match}"))
                continue
            # A line that changes a stored fact is a lasting one ("The user moved to Bremen in the spring."
            # reads like a one-off event to the gate); a new line must pass it.
            if result.action == "add" and self._lasting.dropped(state["message"], fact.statement):
                skipped.append(MemorySkip(text=fact.statement[:80], reason=NOT_LASTING))
                continue
            if result.action == "replace":
                candidate = {**candidate, "replaces": result.match}
                known[fact.target] = [e for e in known[fact.target] if e != result.match]
            known[fact.target].append(fact.statement)
            kept.append(candidate)
        return {"candidates": kept, "skipped": skipped}

    def _judged(self, result: DedupResult, old: str, new: str) -> DedupResult:
        """The model's reading of a new line beside a stored one: the same fact (nothing is written), a
        change of it (replaced) or, for a line the rules would add, another fact. Whether it is the same
        is asked as entailment both ways where the model is calibrated for it (memory/same_fact.py),
        else as part of `relation`."""
        llm = self._llm_factory()
        duplicate = DedupResult(action="duplicate", match=old, similarity=result.similarity)
        replace = DedupResult(action="replace", match=old, similarity=result.similarity)
        old, new = canonical_times(old), canonical_times(new)  # asked in one clock; the matches stay as stored
        threshold = same_threshold(llm, self._same_thresholds)
        if threshold is None:
            judged = relation(llm, old, new)
            return duplicate if judged == "same" else replace if judged == "replaces" else result
        try:
            if same_probability(llm, old, new) >= threshold:
                return duplicate
        except LLMError:
            pass  # not the same, then: a line added or replaced is shown and can be undone
        if result.action == "replace":
            return result
        return replace if relation(llm, old, new) in ("same", "replaces") else result

    def _write(self, state: MemoryState) -> MemoryState:
        writes: list[MemoryWrite] = []
        for candidate in state["candidates"]:
            fact = candidate["fact"]
            file = self._files[fact.target]
            old = candidate["replaces"]
            # The stale entry may have been deleted meanwhile (another session, a hand edit): add then.
            replaced = old is not None and file.replace(old, fact.statement)
            if not replaced:
                file.add(fact.statement)
            writes.append(
                MemoryWrite(
                    target=fact.target,
                    summary=fact.statement,
                    action="replaced" if replaced else "added",
                    replaced=old if replaced else None,
                )
            )
        return {"writes": writes}


def _next_if(key: str, node: str) -> Callable[[MemoryState], str]:
    def route(state: MemoryState) -> str:
        return node if state.get(key) else END

    return route
