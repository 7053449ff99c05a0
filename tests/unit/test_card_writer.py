"""The card writer's thread: it writes when the model is idle and ends when its owner is gone."""

from __future__ import annotations

import gc
import threading
import time
import weakref

from ragchat.card_writer import CardTarget, CardWriter, stop_all_writers


class _Queue:
    active = 0
    waiting = 0


class _Model:
    queue = _Queue()


def _target(polled: threading.Event) -> CardTarget:
    def documents() -> list:
        polled.set()
        return []

    return CardTarget(
        documents=documents,
        cards=lambda: _NoCards(),
        llm=lambda: _Model(),
        model=lambda: "m",
        write=lambda record, stop: None,
        ingesting=lambda: False,
    )


class _NoCards:
    def versions(self) -> list:
        return []


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "card-writer" and t.is_alive()]


def test_the_thread_polls_while_its_writer_lives_and_ends_when_it_is_dropped() -> None:
    before = len(_writer_threads())
    polled = threading.Event()
    writer = CardWriter(_target(polled), poll_s=0.01)
    writer.start()
    assert polled.wait(5)
    assert len(_writer_threads()) == before + 1
    del writer
    gc.collect()
    deadline = time.monotonic() + 5
    while len(_writer_threads()) > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(_writer_threads()) == before


def test_stop_ends_the_thread() -> None:
    polled = threading.Event()
    writer = CardWriter(_target(polled), poll_s=0.01)
    writer.start()
    assert polled.wait(5)
    writer.stop()
    thread = writer._thread
    assert thread is not None
    thread.join(5)
    assert not thread.is_alive()


def test_stopping_all_writers_interrupts_a_card_being_written() -> None:
    writing = threading.Event()
    asked_to_stop = threading.Event()

    def write(record: object, stop) -> None:
        writing.set()
        deadline = time.monotonic() + 5
        while not stop() and time.monotonic() < deadline:
            time.sleep(0.01)
        if stop():
            asked_to_stop.set()

    class _Record:
        pending_chunks = 0
        doc_id = "d"
        content_hash = "h"

    target = CardTarget(
        documents=lambda: [_Record()],
        cards=lambda: _NoCards(),
        llm=lambda: _Model(),
        model=lambda: "m",
        write=write,
        ingesting=lambda: False,
    )
    writer = CardWriter(target, poll_s=0.01)
    writer.start()
    assert writing.wait(5)
    stop_all_writers()
    assert asked_to_stop.wait(5)


class _Index:
    """An ingest target that indexes nothing (the jobs' worker is what is under test)."""

    def ingest_bytes(self, name: str, data: bytes, progress, password=None, redact=None, cancel=None):
        from core.schemas import IngestResult

        return IngestResult(source=name, status="indexed")

    def reindex(self, progress) -> list:
        return []

    def resume(self, progress, cancel=None) -> list:
        return []


def test_the_end_of_an_ingest_wakes_the_writer_before_its_next_poll() -> None:
    from ragchat.ingest_jobs import IngestJobs

    polled = threading.Event()
    writer = CardWriter(_target(polled), poll_s=600)
    jobs = IngestJobs(_Index())
    jobs.when_idle(writer.waker())
    writer.start()
    assert not polled.wait(0.3), "an idle writer waits for its poll"
    jobs.submit("a.txt", b"text")
    assert polled.wait(10), "woken when the ingest ended, not 600 s later"
    writer.stop()


def test_a_waker_does_not_keep_its_writer_alive() -> None:
    polled = threading.Event()
    writer = CardWriter(_target(polled), poll_s=600)
    wake = writer.waker()
    dropped = threading.Event()

    weakref.finalize(writer, dropped.set)
    del writer
    gc.collect()
    assert dropped.is_set()
    wake()  # harmless once the writer is gone
