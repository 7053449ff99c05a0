"""The memory graph (LangGraph): screen → analyze → dedup → write.

screen    rules: which sentences could state a fact, about whom; the secret veto on the whole message
          (a message holding a secret never reaches the model)
analyze   the LLM condenses each candidate into a MemoryDecision (JSON-schema constrained), checked:
          confidence threshold, third person, no words the user did not say, no secret in the summary
dedup     against the target file's entries: repeat → skip, new value of a known fact → replace
write     atomic edits of USER_MEMORY.md / COMPANY_MEMORY.md under a file lock

Each step ends the run early when nothing is left to do, so a question costs no model call.
The input is only the user's own message; answers and document text never enter this graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypedDict

from langgraph.graph import END, START, StateGraph

from core.schemas import MemoryOutcome, MemorySkip, MemoryWrite
from core.secrets import find_secret
from memory.analyzer import Rejected, analyze, checked_summary
from memory.dedup import compare
from memory.markdown_store import MemoryFile
from memory.prefilter import Statement, screen
from providers.llm.base import LLM

Target = Literal["USER", "COMPANY"]


class _Candidate(TypedDict):
    statement: Statement
    summary: str
    confidence: float
    replaces: str | None


class MemoryState(TypedDict, total=False):
    message: str
    statements: list[Statement]
    candidates: list[_Candidate]
    writes: list[MemoryWrite]
    skipped: list[MemorySkip]


class MemoryGraph:
    def __init__(
        self,
        llm_factory: Callable[[], LLM],
        embed: Callable[[list[str]], list[list[float]]],
        files: dict[str, MemoryFile],
        min_confidence: float,
        related_similarity: float,
    ) -> None:
        self._llm_factory = llm_factory
        self._embed = embed
        self._files = files
        self._min_confidence = min_confidence
        self._related_similarity = related_similarity
        graph = StateGraph(MemoryState)
        graph.add_node("screen", self._screen)
        graph.add_node("analyze", self._analyze)
        graph.add_node("dedup", self._dedup)
        graph.add_node("write", self._write)
        graph.add_edge(START, "screen")
        graph.add_conditional_edges("screen", _next_if("statements", "analyze"))
        graph.add_conditional_edges("analyze", _next_if("candidates", "dedup"))
        graph.add_conditional_edges("dedup", _next_if("candidates", "write"))
        graph.add_edge("write", END)
        self._graph = graph.compile()

    def run(self, message: str) -> MemoryOutcome:
        state = self._graph.invoke({"message": message, "writes": [], "skipped": []})
        return MemoryOutcome(writes=state.get("writes", []), skipped=state.get("skipped", []))

    def _screen(self, state: MemoryState) -> MemoryState:
        message = state["message"]
        if secret := find_secret(message):
            return {"statements": [], "skipped": [MemorySkip(text=message[:80], reason=f"it holds {secret}")]}
        screened = screen(message)
        skipped = [] if screened.statements else [MemorySkip(text=message[:80], reason=screened.skip_reason or "")]
        return {"statements": screened.statements, "skipped": skipped}

    def _analyze(self, state: MemoryState) -> MemoryState:
        candidates: list[_Candidate] = []
        skipped = list(state["skipped"])
        llm = self._llm_factory()
        for statement in state["statements"]:
            try:
                decision = analyze(llm, statement)
                summary, _how = checked_summary(decision, statement, self._min_confidence)
                if secret := find_secret(summary):
                    raise Rejected(f"it holds {secret}")
            except Rejected as rejected:
                skipped.append(MemorySkip(text=statement.text, reason=str(rejected)))
                continue
            candidates.append(
                {"statement": statement, "summary": summary, "confidence": decision.confidence, "replaces": None}
            )
        return {"candidates": candidates, "skipped": skipped}

    def _dedup(self, state: MemoryState) -> MemoryState:
        kept: list[_Candidate] = []
        skipped = list(state["skipped"])
        known: dict[str, list[str]] = {target: file.entries() for target, file in self._files.items()}
        for candidate in state["candidates"]:
            target = candidate["statement"].target
            result = compare(candidate["summary"], known[target], self._embed, self._related_similarity)
            if result.action == "duplicate":
                reason = f"already remembered: {result.match}"
                skipped.append(MemorySkip(text=candidate["statement"].text, reason=reason))
                continue
            if result.action == "replace":
                candidate = {**candidate, "replaces": result.match}
                known[target] = [e for e in known[target] if e != result.match]
            known[target].append(candidate["summary"])
            kept.append(candidate)
        return {"candidates": kept, "skipped": skipped}

    def _write(self, state: MemoryState) -> MemoryState:
        writes: list[MemoryWrite] = []
        for candidate in state["candidates"]:
            target: Target = candidate["statement"].target
            file = self._files[target]
            old = candidate["replaces"]
            # The stale entry may have been deleted meanwhile (another session, a hand edit): add then.
            replaced = old is not None and file.replace(old, candidate["summary"])
            if not replaced:
                file.add(candidate["summary"])
            writes.append(
                MemoryWrite(
                    target=target,
                    summary=candidate["summary"],
                    confidence=candidate["confidence"],
                    action="replaced" if replaced else "added",
                    replaced=old if replaced else None,
                )
            )
        return {"writes": writes}


def _next_if(key: str, node: str) -> Callable[[MemoryState], str]:
    def route(state: MemoryState) -> str:
        return node if state.get(key) else END

    return route
