"""The sidebar's ingestion parts: upload, live progress with Cancel, password prompts, the rebuild
notice, and the notes and redaction report of each document.

Ingests run as background jobs owned by the cached session (ragchat/ingest_jobs.py), not by the page: a
2,000-page PDF takes minutes and the chat must stay usable meanwhile. The page keeps only job ids in
its session state; a fragment polls them every second while any is unfinished, and reruns the whole
page once when one finishes, so the document list catches up.
"""

from __future__ import annotations

import streamlit as st

from core.schemas import DocumentRecord, IngestResult
from ragchat.ingest_jobs import IngestJobView
from ragchat.session import Session
from ui.common import calm_errors, duration, escape_markdown

UPLOAD_TYPES = ["pdf", "txt", "md", "markdown"]
POLL_SECONDS = 1.0


def init_state(session: Session) -> None:
    st.session_state.setdefault("ingest_jobs", [])  # job ids this session started, oldest first
    st.session_state.setdefault("ingest_jobs_done", [])  # those already seen finished (one rerun each)
    st.session_state.setdefault("uploader_key", 0)
    st.session_state.setdefault("uploaded_sources", [])  # indexed in this browser session, oldest first
    st.session_state.setdefault("redact_uploads", session.settings.redact_pii)


def size_text(pages: int | None, chunks: int) -> str:
    """TXT and Markdown have no pages (None), so only PDFs mention them."""
    chunk_text = f"{chunks} chunk{'s' if chunks != 1 else ''}"
    return f"{pages} page{'s' if pages != 1 else ''}, {chunk_text}" if pages else chunk_text


def render_index_notice(session: Session) -> None:
    """When the stored vectors were made with other settings, or the vector store lost documents'
    chunks (a Chroma server wiped or restored), say so and offer the rebuild."""
    with calm_errors("Checking the index"):
        problems = session.index_problems()
        lost = [d.source for d in session.documents() if d.missing_chunks]
        if not (problems or lost) or session.jobs.busy():
            return
        if problems:
            st.warning(
                "The index was built with other settings and must be rebuilt before searching: "
                + "; ".join(problems)
                + ". Rebuilding re-reads the stored page texts; no upload is needed."
            )
        else:
            st.warning(
                f"The vector store ({escape_markdown(session.models().vector_store)}) lost chunks of "
                f"{escape_markdown(', '.join(lost))}, so "
                "they are not fully searchable. Rebuilding re-reads the stored page texts; no upload is needed."
            )
        if st.button("Rebuild index", icon=":material/refresh:", type="primary", width="stretch"):
            st.session_state.ingest_jobs.append(session.jobs.submit_rebuild())
            st.rerun()


def render_uploader(session: Session) -> None:
    """Queue the chosen files as background jobs when the button is pressed, then reset the uploader.

    Files are only queued on the button press, so an ordinary rerun (a chat question, a delete)
    never indexes them again; the uploader gets a fresh key afterwards so the list empties.
    """
    uploads = st.file_uploader(
        "Add documents",
        type=UPLOAD_TYPES,
        accept_multiple_files=True,
        key=f"uploader-{st.session_state.uploader_key}",
        help="PDF, TXT or Markdown. A file with the same name replaces the indexed version.",
    )
    st.checkbox(
        "Redact personal data",
        key="redact_uploads",
        help="Replace e-mail addresses, phone numbers, IP addresses and long tokens with placeholders "
        "before indexing. Each document lists what was replaced.",
    )
    if not st.button("Index files", disabled=not uploads, type="primary", width="stretch"):
        return
    _forget_finished(session)
    for upload in uploads or []:
        job_id = session.jobs.submit(upload.name, upload.getvalue(), redact=st.session_state.redact_uploads)
        st.session_state.ingest_jobs.append(job_id)
    st.session_state.uploader_key += 1
    st.rerun()


def render_jobs(session: Session) -> None:
    """This session's ingests: live while any runs (polled), then their outcome. Documents an
    interrupted ingest left searchable by keyword only are finished here, as a job of their own."""
    if not st.session_state.get("resume_checked") and not session.jobs.busy():
        st.session_state.resume_checked = True  # once per browser session; a running ingest elsewhere is left alone
        left = any(d.pending_chunks for d in session.documents())
        if left and session.document_index.write_lock.holder() is None:
            st.session_state.ingest_jobs.append(session.jobs.submit_resume())
    views = [v for v in (session.jobs.view(j) for j in st.session_state.ingest_jobs) if v is not None]
    active = any(v.state != "done" for v in views)
    st.fragment(_jobs_fragment, run_every=POLL_SECONDS if active else None)(session)


def _jobs_fragment(session: Session) -> None:
    views = [v for v in (session.jobs.view(j) for j in st.session_state.ingest_jobs) if v is not None]
    for view in views:
        if view.state == "done":
            _render_outcome(session, view)
        else:
            _render_running(session, view)
    newly_done = [v for v in views if v.state == "done" and v.job_id not in st.session_state.ingest_jobs_done]
    st.session_state.ingest_jobs_done += [v.job_id for v in newly_done]
    for view in newly_done:  # what "this document" means in a request about a whole document
        if view.result is not None and view.result.status in ("indexed", "unchanged"):
            st.session_state.uploaded_sources.append(view.result.source)
    if any(_changes_the_page(v) for v in newly_done):
        st.rerun()  # the whole page: the document list, the chat's prompt or the rebuild notice change
    if views and not any(v.state != "done" for v in views) and st.button("Clear messages", type="tertiary"):
        _forget_finished(session)
        st.rerun()


def _changes_the_page(view: IngestJobView) -> bool:
    """Whether a finished job changes more than this panel shows. A document the page already lists
    needs no whole-page rerun: an extra rerun races the person's next question (one typed as the
    rerun starts was lost, which made the chat browser test fail now and then)."""
    if view.kind == "rebuild":
        return True
    result = view.result
    return (
        result is not None
        and result.status == "indexed"
        and result.source not in st.session_state.get("listed_sources", set())
    )


def _render_running(session: Session, view: IngestJobView) -> None:
    progress = view.progress
    if view.kind != "rebuild":  # the stage, pages or chunks embedded, the rate and the time left
        label = f"**{view.name}**: {progress.describe()}"
    else:
        label = f"**{view.name}**: {progress.stage}"
        if progress.pages_total > 1:
            label += f" · {progress.pages_done}/{progress.pages_total} documents"
        if progress.eta_s is not None:
            label += f" · about {duration(progress.eta_s * 1000)} left"
    if progress.searchable and view.name not in st.session_state.get("listed_sources", set()):
        # Searchable by keyword before it is embedded: list it (and let the chat ask about it) now.
        st.session_state.setdefault("listed_sources", set()).add(view.name)
        st.rerun()
    if view.state == "queued":
        label = f"**{view.name}**: waiting for the file before it"
    st.progress(progress.fraction, text=label)
    if view.kind == "ingest":
        if view.cancelling:
            st.caption("Cancelling… the index will be left as it was.")
        elif st.button("Cancel", key=f"cancel-{view.job_id}", icon=":material/cancel:", type="tertiary"):
            session.jobs.cancel(view.job_id)
            st.rerun(scope="fragment")


def _render_outcome(session: Session, view: IngestJobView) -> None:
    if view.kind == "resume":
        for result in view.rebuilt:
            st.success(f"**{result.source}**: semantic index complete.")
        return
    if view.kind == "rebuild":
        failed = [r for r in view.rebuilt if r.status == "failed"]
        st.success(f"Index rebuilt: {len(view.rebuilt) - len(failed)} document(s).")
        for result in failed:
            st.warning(f"**{result.source}** was removed: {result.error}")
        return
    result = view.result or IngestResult(source=view.name, status="failed", error="no result")
    if result.status == "indexed":
        st.success(f"**{result.source}** indexed: {size_text(result.pages, result.chunks)}.")
    elif result.status == "unchanged":
        st.info(f"**{result.source}** is already indexed (unchanged).")
    elif result.status == "cancelled":
        st.info(f"**{result.source}**: cancelled. The index is as it was.")
    else:
        st.warning(f"**{result.source}** could not be indexed: {result.error or 'unknown error'}")
        if result.needs_password:
            _password_prompt(session, view)
    for warning in result.warnings:
        st.caption(f"{result.source}: {warning}")


def _password_prompt(session: Session, view: IngestJobView) -> None:
    password = st.text_input(f"Password for {view.name}", type="password", key=f"password-{view.job_id}")
    if st.button("Open with this password", key=f"open-{view.job_id}", disabled=not password):
        job_id = session.jobs.retry_with_password(view.job_id, password)
        jobs = st.session_state.ingest_jobs
        jobs[jobs.index(view.job_id)] = job_id or view.job_id
        session.jobs.forget(view.job_id)
        st.rerun()


def _forget_finished(session: Session) -> None:
    keep = []
    for job_id in st.session_state.ingest_jobs:
        view = session.jobs.view(job_id)
        if view is not None and view.state != "done":
            keep.append(job_id)
        else:
            session.jobs.forget(job_id)
    st.session_state.ingest_jobs = keep


def render_document_notes(session: Session, doc: DocumentRecord) -> None:
    """Under a document in the list: how it was read (OCR, pages without text, encoding) and, when
    it was redacted, the report to review."""
    for warning in doc.warnings:
        st.caption(warning)
    if doc.missing_chunks:
        st.caption(f":orange[{doc.missing_note()}]")
    if doc.pending_chunks:
        st.caption(f":blue[{doc.embedding_note()}]")
    if doc.redacted:
        with st.expander(f"Redactions ({doc.redactions})"):
            report = session.redactions(doc.source)
            if not report:
                st.caption("Nothing was found to redact.")
            else:
                rows = [
                    {"page": r.page or "–", "kind": r.kind, "placeholder": r.placeholder, "was": r.preview}
                    for r in report
                ]
                st.dataframe(rows, hide_index=True, width="stretch")
