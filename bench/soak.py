"""Staying power: several users on one process for a few hundred questions, with ingests, deletes
and memory notes in between. Does anything fail, is every turn kept, does memory stay put?

What it does: one App (as the Streamlit server builds it, ui/common.py), in a temporary RAGCHAT_HOME,
with the shared document index; the starter set's documents (sample_docs/) are ingested. --users
named users each get their Session from it, and each runs in a thread of its own, calling what the
chat page calls, one step after the other, without pause:

* a question: ``Session.ask_stream`` with the page's options (conversation id, client id, the
  documents uploaded in this conversation), its tokens read to the end, ``result()``, ``close()``,
  then ``finish()`` (the memory stage) when ``needs_memory`` says so. Questions are the starter set's,
  shared out round robin, and after each upload (every 10 questions) one about the uploaded file. A
  user starts a new conversation every 10 questions;
* a memory note (before every 8th question): a statement of a lasting fact about the user or the
  company, varied wording ("Just so you know, my manager is …", "We close the books on the …"),
  through the same path;
* an upload: ``Session.jobs.submit`` (the background ingest the upload panel starts) and a wait for
  it: generated TXT and PDF files (bench/ingest_throughput.py's prose), and once each, spread over
  the run, a replacement of returns_policy.txt by an edited version, its restoration, a re-upload of
  an unchanged file, and a file that is not a PDF though named .pdf (which must be refused with a
  reason: an expected refusal, not an error);
* a delete: ``Session.delete`` of the user's upload two before its latest.

--max-minutes ends the run early: no step starts after it, and the figures count what was done.

Warm-up: the models are loaded before the users start; the RSS baseline is the sample taken when
--warm-questions questions of the run have been answered (with their rewrites, memory passes, notes
and uploads, by then llama.cpp's RAM prompt cache is at its bound, RAGCHAT_LLM_CACHE_RAM_MIB, so what
grows after it is not that cache). Every other figure counts the whole run.

Reported: errors (an exception; an answer with ``error`` set; an upload that failed, other than the
expected refusal; a delete that found nothing), turns stored (every turn a user was answered is read
back from the conversation store, in order), documents at the end (the registry holds exactly the
files that should be live), RSS sampled every --sample-s seconds (after warm-up, end, max, growth),
queue wait (``timings_ms["queue_wait_ms"]``) and answer latency (asked → checked answer, before the
memory stage) p50/p95 for questions, note latency, throughput, the most generations that ran at
once (counted at the llama.cpp call, bench/load_test.py), load average at start and end; --json
also keeps every RSS sample, to see whether RSS levelled off or was still rising at the end. Exit 1
when there was an error, a lost turn, a wrong document list or overlapping generations.

    .venv/bin/python -m bench.soak --questions 200                      # bench/results-soak.md
    .venv/bin/python -m bench.soak --questions 12 --sample-s 2          # a quick look

The per-session rate limit is off (RAGCHAT_RATE_LIMIT_PER_MINUTE=0): the users ask back to back,
faster than a person, and this measures the process, not that guardrail. Nothing listens on a port.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from bench.ingest_throughput import OBJECTS, PLACES, SUBJECTS, TOPICS, page_text, write_prose_pdf
from bench.load_test import CountingServer, percentile, starter_questions
from bench.rss_sampler import RssFigures, RssSampler
from core.schemas import Answer
from core.settings import get_settings
from providers.llm.llamacpp import LlamaCppLLM
from rag.conversations import ConversationStore
from rag.pipeline import AskOptions
from ragchat.application import App
from ragchat.session import Session

CONVERSATION_TURNS = 10  # questions before a user starts a new conversation
NOTE_EVERY = 8  # a memory note before every 8th question
UPLOAD_EVERY = 10  # an upload (then a question about it) every 10 questions; the one two before is deleted
REPLACED = "returns_policy.txt"
UNCHANGED = "nimbus_hub_faq.md"
NOT_A_PDF = "scan-of-receipt.pdf"

FIRST_NAMES = ["Amira", "Bastien", "Chen", "Dolores", "Emeka", "Freya", "Goran", "Hana"]
MONTHS = ["January", "April", "July", "October"]
# Lasting facts, worded as people state them: about the user ({0}…) and about their company.
NOTES = [
    "My name is {name}.",
    "I work in the {place} warehouse.",
    "Just so you know, my manager is {name}.",
    "Please remember that I prefer short answers with the figures first.",
    "Our company ships every order from {place}.",
    "We close the books on the {day}th of every month.",
    "For the record, I am responsible for {object}.",
    "Note that our support desk opens at {hour} am on weekdays.",
    "I'm based in {place} and work from home on Fridays.",
    "Our fiscal year starts in {month}.",
]

Kind = Literal["ask", "note", "upload", "delete"]


class Step(BaseModel):
    """One thing a simulated user does."""

    kind: Kind
    text: str = ""  # ask / note: the message; upload / delete: the file name
    data: bytes = b""
    refusal_expected: bool = False  # an upload the app must refuse with a reason


class Done(BaseModel):
    """One step as it went."""

    user: str
    kind: Kind
    text: str
    seconds: float
    answer_ms: float | None = None  # a question or note: asked → checked answer (before the memory stage)
    queue_wait_ms: float | None = None
    refused: bool = False
    error: str | None = None
    refusal: str | None = None  # an expected refusal's reason
    conversation: str | None = None


class Figures(BaseModel):
    users: int
    questions: int
    notes: int
    uploads: int
    deletes: int
    wall_s: float
    questions_per_min: float
    errors: int
    error_messages: list[str]
    expected_refusals: list[str]
    refused_answers: int
    turns_asked: int
    turns_stored: int
    documents_as_expected: bool
    documents_note: str
    queue_wait_p50_ms: float
    queue_wait_p95_ms: float
    answer_p50_ms: float
    answer_p95_ms: float
    note_p50_ms: float
    note_p95_ms: float
    upload_p50_s: float
    upload_max_s: float
    generations: int
    max_generations_at_once: int
    rss: RssFigures
    load_start: float
    load_end: float


# ---- the plan ----------------------------------------------------------------------------------


def note(rng: random.Random) -> str:
    template = rng.choice(NOTES)
    return template.format(
        name=f"{rng.choice(FIRST_NAMES)} {rng.choice(['Okafor', 'Lindqvist', 'Moreau', 'Tanaka'])}",
        place=rng.choice(PLACES),
        day=rng.choice([5, 10, 15, 20, 25]),
        object=rng.choice(OBJECTS),
        hour=rng.randint(7, 9),
        month=rng.choice(MONTHS),
    )


def generated_upload(user: int, number: int, rng: random.Random, workdir: Path) -> tuple[Step, str]:
    """A new file (TXT and PDF in turn) and a question about what it says."""
    place, topic = rng.choice(PLACES), rng.choice(TOPICS)
    subject, thing = rng.choice(SUBJECTS), rng.choice(OBJECTS)
    if number % 2 == 0:
        name = f"u{user}-{topic.lower().replace(' ', '-')}-{number}.txt"
        body = f"{topic} at {place}\n\n{subject} reviewed {thing} in {place}.\n\n{page_text(rng)}"
        step = Step(kind="upload", text=name, data=body.encode())
        return step, f"What did {subject.lower()} review in {place}?"
    path = workdir / f"u{user}-report-{number}.pdf"
    write_prose_pdf(path, pages=3, seed=rng.randrange(10**6))
    return Step(kind="upload", text=path.name, data=path.read_bytes()), f"What happened to {thing} in {place}?"


def special_upload(user: int, sample_docs: dict[str, bytes]) -> tuple[int, Step]:
    """Each user's one-off upload and where in its run it falls (a share of its questions, so the
    replacement comes before its restoration)."""
    original = sample_docs[REPLACED]
    edited = original.replace(b"30 days", b"45 days").replace(b"15 percent", b"10 percent")
    if edited == original:
        raise SystemExit(f"{REPLACED} no longer says what the bench edits; update special_upload")
    specials = [
        (1 / 3, Step(kind="upload", text=REPLACED, data=edited)),
        (1 / 2, Step(kind="upload", text=UNCHANGED, data=sample_docs[UNCHANGED])),
        (1 / 2, Step(kind="upload", text=NOT_A_PDF, data=b"Receipt 4471, paid in cash.\n", refusal_expected=True)),
        (2 / 3, Step(kind="upload", text=REPLACED, data=original)),
    ]
    share, step = specials[user % len(specials)]
    return int(share * 100), step


def user_plan(
    user: int, questions: list[str], sample_docs: dict[str, bytes], rng: random.Random, workdir: Path
) -> list[Step]:
    """`questions` are this user's starter questions; uploads, deletes, notes and the one-off upload
    are put between them."""
    steps: list[Step] = []
    uploaded: list[str] = []
    special_at, special = special_upload(user, sample_docs)
    special_index = special_at * len(questions) // 100
    for index, question in enumerate(questions):
        if index == special_index:
            steps.append(special)
        if index % NOTE_EVERY == NOTE_EVERY // 2:
            steps.append(Step(kind="note", text=note(rng)))
        if index % UPLOAD_EVERY == 1:
            upload, question = generated_upload(user, len(uploaded), rng, workdir)
            steps.append(upload)
            uploaded.append(upload.text)
            if len(uploaded) >= 3:
                steps.append(Step(kind="delete", text=uploaded[-3]))
        steps.append(Step(kind="ask", text=question))
    return steps


def live_at_end(results: list[Done], sample_docs: dict[str, bytes]) -> set[str]:
    """The documents the registry must hold after these steps (a file is only ever deleted by the user
    who uploaded it, so the users' steps need no common order)."""
    live = set(sample_docs)
    for done in results:
        if done.kind == "upload" and not (done.error or done.refusal):
            live.add(done.text)
        elif done.kind == "delete" and not done.error:
            live.discard(done.text)
    return live


# ---- one user ----------------------------------------------------------------------------------


def run_turn(session: Session, text: str, options: AskOptions) -> tuple[Answer, float]:
    """As ui/chat_page.answer_question does: stream the reply, read the result, close the stream, then
    the memory stage if the turn needs it. Returns the answer and the ms until it was shown."""
    began = time.perf_counter()
    turn = session.ask_stream(text, options)
    try:
        if turn.guardrail is None:
            for _ in turn.tokens():
                pass
        answer = turn.result()
    finally:
        turn.close()
    shown_ms = (time.perf_counter() - began) * 1000
    if turn.needs_memory:
        answer = turn.finish()
    return answer, shown_ms


class User:
    """One simulated user: their Session, their conversation, the files they uploaded in it."""

    def __init__(self, session: Session, client_id: str) -> None:
        self.session = session
        self.client_id = client_id
        self.new_conversation()

    def new_conversation(self) -> None:
        self.conversation = ConversationStore.new_session_id()
        self.asked_in_conversation = 0
        self.uploaded: list[str] = []

    def do(self, step: Step) -> Done:
        began = time.perf_counter()
        done = Done(user=self.session.user or "", kind=step.kind, text=step.text, seconds=0.0)
        try:
            if step.kind in ("ask", "note"):
                self._turn(step, done)
            elif step.kind == "upload":
                self._upload(step, done)
            elif not self.session.delete(step.text):
                done.error = f"delete {step.text}: not found"
        except Exception as exc:  # a crash is a finding, not the end of the run
            done.error = f"{step.kind} {step.text!r}: {exc!r}"
        done.seconds = round(time.perf_counter() - began, 2)
        return done

    def _turn(self, step: Step, done: Done) -> None:
        if step.kind == "ask":
            if self.asked_in_conversation == CONVERSATION_TURNS:
                self.new_conversation()
            self.asked_in_conversation += 1
        options = AskOptions(
            session_id=self.conversation, client_id=self.client_id, recent_documents=tuple(self.uploaded)
        )
        answer, shown_ms = run_turn(self.session, step.text, options)
        done.conversation = self.conversation
        done.answer_ms = round(shown_ms, 1)
        done.queue_wait_ms = answer.timings_ms.get("queue_wait_ms")
        done.refused = answer.refused
        if answer.error:
            done.error = f"{step.kind} {step.text!r}: {answer.error}"

    def _upload(self, step: Step, done: Done) -> None:
        jobs = self.session.jobs
        job_id = jobs.submit(step.text, step.data)
        view = jobs.wait(job_id, timeout=900)
        jobs.forget(job_id)
        result = view.result if view is not None else None
        if result is None:
            done.error = f"upload {step.text}: no result after 900 s"
        elif step.refusal_expected:
            if result.status == "failed" and result.error:
                done.refusal = f"{step.text}: {result.error}"
            else:
                done.error = f"upload {step.text}: should have been refused, was {result.status}"
        elif result.status in ("indexed", "unchanged"):
            self.uploaded.append(step.text)
        else:
            done.error = f"upload {step.text}: {result.status}: {result.error}"


def run_users(
    users: list[User], plans: list[list[Step]], stop_at: float, warm_questions: int, warmed: Callable[[], None]
) -> list[Done]:
    """Every user runs its plan in its own thread; all start together. `warmed` is called once, when
    the warm_questions-th question is done; no step starts after `stop_at` (time.monotonic())."""
    results: list[Done] = []
    lock = threading.Lock()
    start = threading.Barrier(len(users))
    asked = 0

    def run(user: User, plan: list[Step]) -> None:
        nonlocal asked
        start.wait()
        for step in plan:
            if time.monotonic() > stop_at:
                return
            done = user.do(step)
            with lock:
                results.append(done)
                asked += done.kind == "ask"
                if done.kind == "ask" and asked == warm_questions:
                    warmed()

    threads = [
        threading.Thread(target=run, args=(user, plan), name=user.client_id)
        for user, plan in zip(users, plans, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


# ---- checks and figures ------------------------------------------------------------------------


def turns_stored(users: list[User], results: list[Done]) -> int:
    """How many of the answered turns the conversation store gives back, in the order they were asked
    (a conversation whose stored questions differ from what was asked counts none of its turns)."""
    stored = 0
    for user in users:
        name = user.session.user or ""
        conversations: dict[str, list[str]] = {}
        for done in results:  # in completion order, which is this user's own order
            if done.user == name and done.conversation is not None:
                conversations.setdefault(done.conversation, []).append(done.text)
        for conversation, asked in conversations.items():
            kept = [answer.question for answer in user.session.conversations.history(conversation)]
            stored += len(kept) if kept == asked else 0
    return stored


def ms_percentiles(values: list[float]) -> tuple[float, float]:
    return (round(statistics.median(values), 0) if values else 0.0, round(percentile(values, 0.95), 0))


def figures(
    users: list[User],
    results: list[Done],
    wall_s: float,
    counter: CountingServer,
    rss: RssFigures,
    documents: tuple[bool, str],
    load_start: float,
) -> Figures:
    asks = [d for d in results if d.kind == "ask"]
    notes = [d for d in results if d.kind == "note"]
    uploads = [d for d in results if d.kind == "upload"]
    errors = [d.error for d in results if d.error]
    answered = [d for d in asks if not d.error]
    queue_p50, queue_p95 = ms_percentiles([d.queue_wait_ms for d in answered if d.queue_wait_ms is not None])
    answer_p50, answer_p95 = ms_percentiles([d.answer_ms for d in answered if d.answer_ms is not None])
    note_p50, note_p95 = ms_percentiles([d.answer_ms for d in notes if d.answer_ms is not None and not d.error])
    upload_seconds = [d.seconds for d in uploads if not d.error]
    return Figures(
        users=len(users),
        questions=len(asks),
        notes=len(notes),
        uploads=len(uploads),
        deletes=sum(d.kind == "delete" for d in results),
        wall_s=round(wall_s, 1),
        questions_per_min=round(len(answered) / wall_s * 60, 2),
        errors=len(errors),
        error_messages=sorted(set(errors)),
        expected_refusals=sorted({d.refusal for d in results if d.refusal}),
        refused_answers=sum(d.refused for d in answered),
        turns_asked=sum(1 for d in results if d.conversation is not None),
        turns_stored=turns_stored(users, results),
        documents_as_expected=documents[0],
        documents_note=documents[1],
        queue_wait_p50_ms=queue_p50,
        queue_wait_p95_ms=queue_p95,
        answer_p50_ms=answer_p50,
        answer_p95_ms=answer_p95,
        note_p50_ms=note_p50,
        note_p95_ms=note_p95,
        upload_p50_s=round(statistics.median(upload_seconds), 1) if upload_seconds else 0.0,
        upload_max_s=round(max(upload_seconds, default=0.0), 1),
        generations=counter.calls,
        max_generations_at_once=counter.most,
        rss=rss,
        load_start=load_start,
        load_end=round(os.getloadavg()[0], 2),
    )


def check_documents(session: Session, expected: set[str]) -> tuple[bool, str]:
    live = {record.source for record in session.documents()}
    if live == expected:
        return True, f"{len(live)} documents, as expected"
    return False, f"missing {sorted(expected - live)}, unexpected {sorted(live - expected)}"


def print_report(f: Figures) -> None:
    s = 1000
    print(
        "| users | questions | memory notes | uploads | deletes | wall s | questions/min | errors | expected refusals "
        "| refused answers | turns stored / asked | documents at end |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {f.users} | {f.questions} | {f.notes} | {f.uploads} | {f.deletes} | {f.wall_s} | {f.questions_per_min} | "
        f"{f.errors} | {len(f.expected_refusals)} | {f.refused_answers} | {f.turns_stored} / {f.turns_asked} | "
        f"{f.documents_note} |"
    )
    print()
    print(
        "| queue wait p50 s | queue wait p95 s | answer p50 s | answer p95 s | note p50 s | note p95 s "
        "| upload p50 s | upload max s | generations | most at once |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {f.queue_wait_p50_ms / s:.1f} | {f.queue_wait_p95_ms / s:.1f} | {f.answer_p50_ms / s:.1f} | "
        f"{f.answer_p95_ms / s:.1f} | {f.note_p50_ms / s:.1f} | {f.note_p95_ms / s:.1f} | {f.upload_p50_s} | "
        f"{f.upload_max_s} | {f.generations} | {f.max_generations_at_once} |"
    )
    print()
    r = f.rss
    print(
        "| RSS after warm-up MiB | RSS at end MiB | RSS max MiB | growth after warm-up | max over warm-up | samples "
        "| load avg start | load avg end |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {r.warm_mib} | {r.end_mib} | {r.max_mib} | {r.growth_pct:+.1f}% | {r.max_growth_pct:+.1f}% | {r.samples} | "
        f"{f.load_start} | {f.load_end} |"
    )
    for message in f.error_messages:
        print(f"\nerror: {message}")
    for refusal in f.expected_refusals:
        print(f"\nexpected refusal: {refusal}")


# ---- the run -----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=4, help="simulated users, one thread each")
    parser.add_argument("--questions", type=int, default=200, help="questions in all (notes, uploads come on top)")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="RAGCHAT_LLM_MODEL for this run")
    parser.add_argument("--sample-s", type=float, default=5.0, help="seconds between RSS samples")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument(
        "--warm-questions", type=int, default=24, help="questions answered before the RSS baseline is taken"
    )
    parser.add_argument(
        "--max-minutes", type=float, default=None, help="start no step after this long (the figures say how far it got)"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures and every step here")
    args = parser.parse_args()

    load_start = round(os.getloadavg()[0], 2)
    documents, questions = starter_questions()
    sample_docs = {path.name: path.read_bytes() for path in documents}
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ragchat-soak-") as tmp, RssSampler(args.sample_s) as rss:
        workdir = Path(tmp)
        settings = get_settings(home=workdir / "home", llm_model=args.model, rate_limit_per_minute=0)
        app = App(settings)
        users = [User(app.session(f"soak-user-{i}"), f"tab-{i}") for i in range(args.users)]
        failed = [r for r in users[0].session.ingest_paths(documents) if r.status != "indexed"]
        if failed:
            print(f"ingest failed: {failed}", file=sys.stderr)
            return 1
        llm = app.llm()
        if not isinstance(llm, LlamaCppLLM):
            print(f"the soak is about the embedded model, not {llm.label}", file=sys.stderr)
            return 1
        counter = CountingServer.install(llm)
        warm_at: list[float] = []

        def warmed() -> None:
            warm_at.append(time.monotonic())
            rss.sample()  # the baseline

        shares = [questions[k % len(questions)] for k in range(args.questions)]
        plans = [user_plan(i, shares[i :: args.users], sample_docs, rng, workdir) for i in range(args.users)]
        began = time.perf_counter()
        stop_at = time.monotonic() + args.max_minutes * 60 if args.max_minutes else float("inf")
        results = run_users(users, plans, stop_at, args.warm_questions, warmed)
        if not warm_at:
            print(f"the run ended before {args.warm_questions} questions: no RSS baseline", file=sys.stderr)
            return 1
        wall = time.perf_counter() - began
        rss.sample()
        report = figures(
            users,
            results,
            wall,
            counter,
            rss.figures(warm_at[0]),
            check_documents(users[0].session, live_at_end(results, sample_docs)),
            load_start,
        )
    rss_series = rss.series(warm_at[0])
    print_report(report)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "figures": report.model_dump(),
                    "rss_series": [point.model_dump() for point in rss_series],
                    "steps": [d.model_dump() for d in results],
                },
                indent=1,
            )
        )
    print(json.dumps(report.model_dump()))
    failed_checks = (
        report.errors
        or report.turns_stored != report.turns_asked
        or not report.documents_as_expected
        or report.max_generations_at_once > 1
    )
    return 1 if failed_checks else 0


if __name__ == "__main__":
    sys.exit(main())
