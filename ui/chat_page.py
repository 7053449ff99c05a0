"""The chat page: upload and index documents, ask, read streamed answers with checkable sources."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.schemas import Answer, DocumentRecord, GuardrailOutcome, Hit
from rag.conversation_export import LOW_CONFIDENCE_NOTE
from rag.pipeline import AskOptions
from ragchat.session import Session, Turn
from ui import ingest_panel
from ui.citations import blockquote, render_citation_chips
from ui.common import calm_errors, calm_notice, duration, escape_markdown, get_user_session, shorten
from ui.copy_button import copy_button
from ui.memory_panel import render_memory_panel
from ui.settings_panel import init_settings, render_model_status, render_settings, retrieval_options

CARD_CHARS = 220  # a document's card in the list: its overview, shortened (the whole of it on hover)

log = logging.getLogger("ragchat.app")

EMPTY_STATE = "Upload a document in the sidebar to start."
GUARDRAIL_ICONS = {
    "length": ":material/short_text:",
    "injection": ":material/shield:",
    "rate_limit": ":material/timer:",
}

EMPTY_STEPS = """1. **Add documents**: PDF, TXT or Markdown, in the sidebar, then press **Index files**.
2. **Ask** in the box below (Enter sends). Answers cite the file and page; click a source to read the passage.
3. **Tell it about yourself**, e.g. "I'm a Project Finance Analyst.": it is noted in the **Memory** panel."""

Message = dict[str, Any]


# ----------------------------------------------------------------------------- sidebar


def init_state(session: Session) -> None:
    st.session_state.setdefault("messages", [])
    st.session_state.setdefault("session_id", session.conversations.new_session_id())
    # The rate limit's key: this browser session, which "New conversation" does not reset.
    st.session_state.setdefault("client_id", uuid.uuid4().hex)
    init_settings(session)
    st.session_state.setdefault("notice", None)
    ingest_panel.init_state(session)


def render_documents(session: Session, documents: list[DocumentRecord]) -> None:
    st.subheader("Documents")
    if st.session_state.notice:
        st.info(st.session_state.notice)
        st.session_state.notice = None
    if not documents:
        st.caption("No documents indexed yet.")
        return
    for doc in documents:
        name_col, button_col = st.columns([5, 1], vertical_alignment="center")
        name_col.markdown(f"**{doc.source}**  \n{ingest_panel.size_text(doc.pages, doc.chunks)}")
        if card := session.document_card(doc):
            name_col.caption(escape_markdown(shorten(card, CARD_CHARS)), help=card)
        delete = button_col.button(
            "", icon=":material/delete:", type="tertiary", key=f"delete-{doc.doc_id}", help=f"Delete {doc.source}"
        )
        if delete:
            with calm_errors(f"Deleting {doc.source}"):
                removed = session.delete(doc.source)
                st.session_state.notice = f"Deleted {doc.source}." if removed else f"{doc.source} was already gone."
                st.rerun()
        ingest_panel.render_document_notes(session, doc)
    st.multiselect(
        "Ask about",
        [doc.source for doc in documents],
        key="scope_documents",
        placeholder="all documents",
        help="Questions are answered from these documents only. Requests about whole documents (an overview, a "
        "summary, key points) with none chosen are about the document named, or the one uploaded last.",
    )
    st.toggle(
        "Read long documents thoroughly",
        key="thorough_reading",
        value=session.settings.document_reading == "thorough",
        help="Off: an overview of a long document is written in seconds from passages chosen across it. On: every "
        "section is summarised first (minutes per hundred pages), then the summaries are combined.",
    )


def render_conversations(session: Session) -> None:
    """Conversations are stored in SQLite; pick one to continue it, or start a new one.

    Both act in callbacks, before the page is drawn. The picker has a key and is set to the
    conversation on screen before it is drawn: its options change whenever a turn is stored, and
    without a key that made it a new widget that dropped the user's pick."""
    st.subheader("Conversation")
    st.button(
        "New conversation",
        icon=":material/add_comment:",
        width="stretch",
        on_click=open_session,
        args=(session.conversations.new_session_id(), []),
    )
    sessions = session.conversations.sessions(limit=20)
    if not sessions:
        return
    labels = {s.session_id: f"{shorten(s.title, 40)} · {s.turns} turn{'s' if s.turns != 1 else ''}" for s in sessions}
    current = st.session_state.session_id
    options = list(labels) if current in labels else [current, *labels]
    st.session_state.conversation_picker = current
    st.selectbox(
        "Continue a conversation",
        options,
        key="conversation_picker",
        format_func=lambda sid: labels.get(sid, "New conversation"),
        on_change=_open_picked,
        args=(session,),
    )
    if current in labels:
        st.download_button(
            "Export as Markdown",
            data=lambda: session.export_conversation(current) or "",
            file_name=f"ragchat-conversation-{current}.md",
            mime="text/markdown",
            icon=":material/download:",
            on_click="ignore",
            width="stretch",
            help="This conversation with its sources. Emails, phone numbers and secrets are masked in storage.",
        )


def _open_picked(session: Session) -> None:
    chosen = st.session_state.conversation_picker
    with calm_errors("Opening the conversation"):
        open_session(chosen, session.conversations.history(chosen, with_candidates=True))


def open_session(session_id: str, turns: list[Answer]) -> None:
    """Show a stored conversation as it was: answers with their sources, retrieval details, checks
    and notices (its text as stored, i.e. masked)."""
    messages: list[Message] = []
    for turn in turns:
        messages.append({"role": "user", "content": turn.question})
        messages.append(_assistant_message(turn))
    st.session_state.session_id = session_id
    st.session_state.messages = messages


def _assistant_message(answer: Answer) -> Message:
    return {
        "role": "assistant",
        "content": answer.answer,
        "answer": answer.model_dump(mode="json"),
        "candidates": [h.model_dump(mode="json") for h in answer.candidates],
    }


# ----------------------------------------------------------------------------- chat


def render_sources(answer: Answer) -> None:
    """One row under an answer: a copy button and a chip per cited source."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        copy_button(answer.answer, identity=f"{answer.session_id}\n{answer.question}\n{answer.timings_ms}")
        render_citation_chips(answer.citations, key=f"{answer.session_id}:{answer.question}:{answer.timings_ms}")


def render_guardrail(outcome: GuardrailOutcome) -> None:
    """A stopped question, as a calm notice that says what to do."""
    st.info(outcome.message, icon=GUARDRAIL_ICONS[outcome.rule])


def render_support(answer: Answer) -> None:
    """Sentences the cited sources do not back, and the low-confidence notice."""
    flagged = answer.unsupported_sentences
    if flagged:
        lines = "\n".join(f"- {sentence}" for sentence in flagged)
        st.markdown(f":orange[:material/flag: **Not found in the cited sources** — check these:]\n{lines}")
    if answer.low_confidence:
        st.warning(f"{LOW_CONFIDENCE_NOTE} Check the sources before relying on it.", icon=":material/help:")


def render_answer_details(answer: Answer, candidates: list[Hit]) -> None:
    """Everything shown under an answer's text: the early-stop warning, the support check, sources,
    how the passages were found, model, confidence and timings."""
    if answer.incomplete:
        st.warning(f"The model stopped before finishing: {answer.error}", icon=":material/running_with_errors:")
    elif answer.error:
        st.warning(f"The model did not finish its answer: {answer.error}")
    if answer.search_query != answer.question:
        st.caption(f"Searched for: *{answer.search_query}*")
    if answer.translated_query:
        st.caption(f"Also searched as: *{' / '.join(answer.translated_query.splitlines())}*")
    for partial in answer.still_embedding:  # an ingest is still embedding it
        st.caption(f":blue[:material/hourglass_top: {partial.describe().capitalize()}]")
    if (request := answer.document_request) is not None and request.documents:
        st.caption(f"About {', '.join(request.documents)}: {request.describe()}")
    if not answer.refused:
        if answer.restated:
            render_restated(answer.restated)
        render_support(answer)
        render_sources(answer)
    else:
        if answer.withheld:
            render_withheld(answer.withheld)
        if answer.given.evidence:
            render_closest_passages(answer)
    if answer.memory_used and not answer.refused:
        render_memory_used(answer)
    if candidates:
        render_candidates(candidates, answer.models.reranker)
    if answer.memory_note and answer.memory_note != answer.answer:
        st.info(answer.memory_note, icon=":material/neurology:")
    st.caption(_timing_text(answer))


def render_withheld(reply: str) -> None:
    """The model's reply that no passage it cited holds, or that the answerability check found the
    documents do not state: kept out of the answer, shown for what it is."""
    with st.expander("The model's reply, withheld — the documents do not state it"):
        st.markdown(blockquote(escape_markdown(reply)))


def render_restated(reply: str) -> None:
    """The model's own sentences, which did not state the answer it had copied from the passages: the
    answer shown is the passage's sentence that does."""
    with st.expander("The model's wording, replaced — it did not state its own answer"):
        st.markdown(blockquote(escape_markdown(reply)))


def render_closest_passages(answer: Answer) -> None:
    """A refusal carries no citation; the passages the model read are shown apart, as what they are."""
    with st.expander(f"Closest passages ({len(answer.given.evidence)}) — not support for an answer"):
        st.caption("Your documents do not state the answer. This is the nearest text the model read.")
        for item in answer.given.evidence:
            chunk = item.hit.chunk
            st.markdown(f"**{escape_markdown(chunk.source)}** — {escape_markdown(chunk.locator)}")
            st.markdown(blockquote(shorten(chunk.text, 400)))


def render_memory_used(answer: Answer) -> None:
    """The memory entries the model saw: context about the person asking, not a cited source."""
    entries = [*answer.memory_used.user, *answer.memory_used.company]
    note = "answered from your memory, not from a document" if not answer.citations else "given as context, not cited"
    with st.expander(f"Memory used ({len(entries)})"):
        st.caption(note.capitalize() + ".")
        st.markdown("\n".join(f"- {entry}" for entry in entries))


def render_candidates(candidates: list[Hit], reranker: str) -> None:
    """Retrieval transparency: every candidate with its rank in each retriever and its scores."""
    with st.expander(f"Retrieval details ({len(candidates)} candidates)"):
        st.caption(f"Reranker: {reranker}. A dash means that retriever did not return the passage.")
        rows = [
            {
                "#": rank,
                "source": f"{hit.chunk.source} · {hit.chunk.locator}",
                "BM25 rank": hit.scores.bm25_rank,
                "dense rank": hit.scores.dense_rank,
                "cosine": hit.scores.dense,
                "fused": hit.scores.fused,
                "rerank": hit.scores.rerank,
                "text": shorten(hit.chunk.text, 160),
            }
            for rank, hit in enumerate(candidates, start=1)
        ]
        st.dataframe(rows, hide_index=True, width="stretch")


def render_empty_state(documents: list[DocumentRecord]) -> None:
    """Before the first message: what to do next (no documents yet), or what can be asked."""
    if st.session_state.messages:
        return
    if not documents:
        st.info(EMPTY_STATE, icon=":material/upload_file:")
        st.markdown(EMPTY_STEPS)
        return
    names = ", ".join(d.source for d in documents[:3])
    if len(documents) > 3:
        names += f" and {len(documents) - 3} more"
    st.caption(f"Ask about {names} in the box below. Answers cite the file and page; click a source to check it.")


def render_history(messages: list[Message]) -> None:
    for message in messages:
        with st.chat_message(message["role"]):
            if message.get("failed"):
                calm_notice(message["content"])
                continue
            if message.get("stopped"):
                st.info(message["content"], icon=":material/stop_circle:")
                continue
            answer = Answer.model_validate(message["answer"]) if message.get("answer") else None
            if answer is not None and answer.guardrail is not None:
                render_guardrail(answer.guardrail)
                continue
            st.markdown(message["content"])
            if answer is not None:
                candidates = [Hit.model_validate(h) for h in message.get("candidates", [])]
                render_answer_details(answer, candidates)


def render_queue_notice(slot: DeltaGenerator, ahead: int) -> None:
    """While the question waits for the busy model: how many are ahead; gone when its turn comes."""
    if ahead == 0:
        slot.empty()
        return
    noun = "question" if ahead == 1 else "questions"
    slot.info(
        f"Queued: {ahead} {noun} ahead of yours… The model answers one question at a time.",
        icon=":material/hourglass_top:",
    )


def render_progress(slot: DeltaGenerator, what: str, done: int, total: int) -> None:
    """A long document summarised section by section: how far it got (the answer streams after)."""
    slot.progress(done / total, text=f"{what.capitalize()}: {done} of {total}…")


def render_sections_so_far(slot: DeltaGenerator, found: list[list[Hit]], sentences: list[Hit]) -> None:
    """A long document's section summaries as they are written: something to read (with pages) long
    before the combined answer, which replaces them."""
    found.append(sentences)
    with slot.container(), st.expander(f"Sections summarised so far ({len(found)})", expanded=True):
        for section in found:
            where = ", ".join(dict.fromkeys(f"{h.chunk.source} · {h.chunk.locator}" for h in section))
            st.markdown(f"**{where}** — " + " ".join(h.chunk.text for h in section))


STOPPED_TEXT = "Stopped before the answer was finished. Ask again to get it."


def _stop_answer() -> None:
    """The Stop button's click, run before the rerun it triggers: the rerun ends the script where
    the answer was streaming (the `finally` below ends the generation), and the conversation says
    that this question was stopped."""
    st.session_state.messages.append({"role": "assistant", "content": STOPPED_TEXT, "stopped": True})


def answer_question(session: Session, question: str) -> Message:
    """Stream the answer, then swap in the checked text (invalid citation markers removed). A Stop
    button stays beside it until the answer is complete."""
    with st.chat_message("assistant"):
        stop_slot = st.empty()
        stop_slot.button(
            "Stop", key="stop-answer", icon=":material/stop_circle:", type="tertiary", on_click=_stop_answer
        )
        queue_slot = st.empty()
        stream: Turn | None = None
        try:
            progress_slot = st.empty()
            sections_slot = st.empty()
            sections_found: list[list[Hit]] = []
            options = AskOptions(
                session_id=st.session_state.session_id,
                client_id=st.session_state.client_id,
                on_queued=lambda ahead: render_queue_notice(queue_slot, ahead),
                documents=tuple(st.session_state.get("scope_documents", ())),
                recent_documents=tuple(st.session_state.get("uploaded_sources", ())),
                thorough=st.session_state.get("thorough_reading"),
                on_progress=lambda what, done, total: render_progress(progress_slot, what, done, total),
                on_section=lambda sentences: render_sections_so_far(sections_slot, sections_found, sentences),
                **retrieval_options(),
            )
            stream = session.ask_stream(question, options)
            if stream.guardrail is not None:
                render_guardrail(stream.guardrail)
                return _assistant_message(stream.result())
            text_slot = st.empty()
            with text_slot.container():
                streamed = st.write_stream(stream.tokens())
            with st.spinner("Checking the answer against the documents…"):
                answer = stream.result()
            progress_slot.empty()
            sections_slot.empty()
            queue_slot.empty()  # a wait that ended in "the model is busy" leaves no stale notice
            stop_slot.empty()
        except Exception as exc:
            log.exception("answering failed")
            queue_slot.empty()
            stop_slot.empty()
            content = f"Could not answer: {exc}"
            calm_notice(content)
            return {"role": "assistant", "content": content, "failed": True}
        finally:
            if stream is not None:
                # A rerun (the person clicked or typed meanwhile) stops the script mid-stream: end
                # the generation now, so the model is free for the next question.
                stream.close()
        streamed_text = streamed if isinstance(streamed, str) else ""
        if answer.answer.strip() != streamed_text.strip():
            text_slot.markdown(answer.answer)
        if stream.needs_memory:
            # After the answer is on screen, so remembering never delays it.
            with st.spinner("Checking for facts to remember…"):
                answer = stream.finish()
            if answer.memory_note:
                st.info(answer.memory_note, icon=":material/neurology:")
        render_answer_details(answer, answer.candidates)
    return _assistant_message(answer)


def _timing_text(answer: Answer) -> str:
    timings = answer.timings_ms
    total = f"total {duration(timings['total_ms'])}" if "total_ms" in timings else ""
    if answer.refused and "first_token_ms" not in timings:
        # Retrieval found nothing relevant enough, so no model was asked: naming one would mislead.
        return " · ".join(filter(None, ["no passage was relevant enough; the model was not asked", total]))
    parts = [f"model: {answer.models.llm}"]
    if answer.confidence is not None:
        parts.insert(0, f"confidence {answer.confidence:.2f}")
    if (scored := answer.abstention) is not None and scored.read == "yes_no" and scored.signals:
        odds = scored.signals
        parts.insert(
            0,
            f"read as a yes/no question: yes {odds['p_yes']:.2f}, no {odds['p_no']:.2f}, not settled "
            f"{odds['p_none']:.2f} (refuses at {scored.threshold:.2f})",
        )
    elif scored is not None and scored.score is not None:
        calibrated = "" if scored.calibrated else ", uncalibrated for this model"
        checked = f", checked in {duration(timings['check_ms'])}" if "check_ms" in timings else ""
        parts.insert(
            0,
            f"not-stated score {scored.score:.2f} (refuses at {scored.threshold:.2f}, {scored.strictness}"
            f"{calibrated}{checked})",
        )
    if answer.citations:
        own = sum(c.method == "marker" for c in answer.citations)
        parts.append(f"{own} of {len(answer.citations)} citations chosen by the model")
    if "first_token_ms" in timings:
        shown = timings.get("first_visible_ms", timings["first_token_ms"])  # after the hidden phrase line
        first = f"first words {duration(shown)}"
        if timings.get("llm_load_ms", 0) >= 500:
            first += f" (incl. model load {duration(timings['llm_load_ms'])})"
        parts.append(first)
    return " · ".join(filter(None, [*parts, total]))


# ----------------------------------------------------------------------------- page


def render() -> None:
    """The chat page: documents, conversations and retrieval settings in the sidebar, chat in the main area."""
    st.title("ragchat")
    st.caption("Answers from your own documents, with checkable sources. Everything runs locally.")

    try:
        session = get_user_session()
    except Exception as exc:
        log.exception("starting the session failed")
        calm_notice(f"ragchat could not start: {exc}")
        return
    init_state(session)

    documents: list[DocumentRecord] = []
    with st.sidebar:
        ingest_panel.render_index_notice(session)
        ingest_panel.render_uploader(session)
        with calm_errors("Listing documents"):
            documents = session.documents()
        # Before the jobs panel, so it knows which finished documents this run already shows.
        st.session_state.listed_sources = {d.source for d in documents}
        ingest_panel.render_jobs(session)
        with calm_errors("Listing documents"):
            render_documents(session, documents)
        with calm_errors("Loading conversations"):
            render_conversations(session)
        with calm_errors("Reading the settings"):
            render_settings(session)

    render_empty_state(documents)
    render_history(st.session_state.messages)
    prompt = "Ask a question about your documents" if documents else "Tell me about yourself, or upload a document"
    # A key keeps it one widget whatever its placeholder says: without it, the first indexed document
    # changed the input's identity, the page briefly held the old and the new box, and a question
    # typed into the old one was lost (the chat browser test's intermittent failure).
    question = st.chat_input(prompt, key="question")
    if question:
        st.session_state.messages.append({"role": "user", "content": question})
        with st.chat_message("user"):
            st.markdown(question)
        st.session_state.messages.append(answer_question(session, question))
    # Last, so they already show what the question above just did (model loaded, memory written).
    with st.sidebar:
        with calm_errors("Reading memory"):
            render_memory_panel(session)
        with calm_errors("Reading the model status"):
            render_model_status(session)
