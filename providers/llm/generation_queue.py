"""A first-come, first-served queue in front of the embedded model's one generation slot.

One llama.cpp instance on two cores generates one reply at a time. Without a queue, concurrent
users would wait on a plain lock with no idea why nothing happens, and a crowd would pile up
without limit. Here each caller learns its place (how many generations are ahead), is served in
arrival order, and gets a clear `QueueBusy` instead of waiting forever when the queue is full or
the wait runs too long. The slot is released by whoever ends the generation: on completion, on an
error, or when the consumer stops reading (LlamaCppLLM cancels the generation then).
"""

from __future__ import annotations

import threading
import time
from collections import deque

from providers.llm.base import LLMError, QueueListener

# While a caller waits, its listener hears its position at least this often, so a UI notices at
# its next update that the person has left (Streamlit stops the script on its next element call).
POLL_S = 1.0


class QueueBusy(LLMError):
    """The model is busy: the queue is full, or the wait ran past its limit."""


class Slot:
    """The right to generate, held until `release()` (safe to call more than once)."""

    def __init__(self, queue: GenerationQueue, waited_s: float) -> None:
        self._queue = queue
        self._released = False
        self._lock = threading.Lock()
        self.waited_s = waited_s

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._queue._release()


class GenerationQueue:
    """FIFO access to `slots` generation slots (1 for llama.cpp), at most `limit` callers waiting,
    none longer than `timeout_s`. `max_active` records the most slots ever held at once."""

    def __init__(self, limit: int = 8, timeout_s: float = 300.0, slots: int = 1) -> None:
        self.limit = limit
        self.timeout_s = timeout_s
        self.slots = slots
        self._cond = threading.Condition()
        self._waiting: deque[object] = deque()
        self._active = 0
        self.max_active = 0

    @property
    def active(self) -> int:
        return self._active

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def acquire(self, on_queued: QueueListener | None = None) -> Slot:
        """Wait for the slot in arrival order. `on_queued(n)` hears the number of generations ahead
        when the caller has to wait (at once, on every change and every POLL_S), then 0 when its turn
        comes; it runs in the caller's thread, outside the queue's lock. Raises QueueBusy when
        `limit` callers already wait or the wait passes `timeout_s`; an exception from `on_queued`
        (a Streamlit rerun) leaves the queue as if the caller had never come."""
        started = time.monotonic()
        ticket = object()
        with self._cond:
            if not self._waiting and self._active < self.slots:
                return self._take(started)
            if len(self._waiting) >= self.limit:
                raise QueueBusy(_busy_message(self._active + len(self._waiting)))
            self._waiting.append(ticket)
        told: int | None = None
        told_at = 0.0
        try:
            while True:
                with self._cond:
                    if self._waiting[0] is ticket and self._active < self.slots:
                        self._waiting.popleft()
                        slot = self._take(started)
                        break
                    ahead = self._active + self._waiting.index(ticket)
                    left = started + self.timeout_s - time.monotonic()
                    if left <= 0:
                        raise QueueBusy(_busy_message(ahead, waited_s=self.timeout_s))
                    if ahead == told and time.monotonic() - told_at < POLL_S:
                        self._cond.wait(min(left, POLL_S))
                        continue
                if on_queued is not None:
                    on_queued(ahead)
                told, told_at = ahead, time.monotonic()
        except BaseException:
            with self._cond:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                    self._cond.notify_all()
            raise
        if on_queued is not None and told is not None:
            try:
                on_queued(0)
            except BaseException:
                slot.release()
                raise
        return slot

    def _take(self, started: float) -> Slot:
        """Hold a slot (the caller holds the condition)."""
        self._active += 1
        self.max_active = max(self.max_active, self._active)
        return Slot(self, waited_s=time.monotonic() - started)

    def _release(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()


def _busy_message(others: int, waited_s: float | None = None) -> str:
    waited = f" (waited {waited_s:g} s)" if waited_s is not None else ""
    noun = "question" if others == 1 else "questions"
    return f"The model is busy with {others} other {noun}{waited}; try again in a minute."


class QueueWait:
    """Wraps a caller's listener: passes every position on and adds up the time spent queued
    (between the first position > 0 and the 0 that says the slot is taken)."""

    def __init__(self, listener: QueueListener | None = None) -> None:
        self._listener = listener
        self._since: float | None = None
        self.total_s = 0.0

    def __call__(self, position: int) -> None:
        now = time.perf_counter()
        if position > 0 and self._since is None:
            self._since = now
        elif position == 0 and self._since is not None:
            self.total_s += now - self._since
            self._since = None
        if self._listener is not None:
            self._listener(position)

    @property
    def seconds(self) -> float:
        """Time queued so far, including a wait still going on (one that ended in QueueBusy)."""
        ongoing = time.perf_counter() - self._since if self._since is not None else 0.0
        return self.total_s + ongoing
