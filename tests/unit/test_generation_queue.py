"""The generation queue on its own (threads, no model): arrival order, positions, a full queue, a
wait past the limit, a listener that raises (a Streamlit rerun), and never two slots held at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from providers.llm.generation_queue import GenerationQueue, QueueBusy, QueueWait

WAIT_S = 5.0  # bound on every wait for another thread in these tests


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the other threads"
        time.sleep(0.005)


def queue_up(queue: GenerationQueue, name: str, served: list[str], heard: dict[str, list[int]]) -> threading.Thread:
    """A caller that waits its turn, records it, and frees the slot; started once the previous caller is
    waiting, so arrival order is known."""
    heard[name] = []

    def run() -> None:
        slot = queue.acquire(heard[name].append)
        served.append(name)
        slot.release()

    waiting = queue.waiting
    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: queue.waiting == waiting + 1)
    return thread


def test_callers_are_served_in_arrival_order_and_hear_their_place() -> None:
    queue = GenerationQueue(limit=8, timeout_s=WAIT_S)
    held = queue.acquire()
    served: list[str] = []
    heard: dict[str, list[int]] = {}
    threads = [queue_up(queue, name, served, heard) for name in ("a", "b", "c")]
    assert [heard[name][0] for name in ("a", "b", "c")] == [1, 2, 3]  # generations ahead on arrival

    held.release()
    for thread in threads:
        thread.join(WAIT_S)
    assert served == ["a", "b", "c"]
    # c moved up as the others finished, then heard its turn come; no position was skipped backwards.
    assert heard["c"][-1] == 0 and heard["c"][0] == 3
    assert all(later <= earlier for earlier, later in zip(heard["c"], heard["c"][1:], strict=False))
    assert queue.active == 0 and queue.waiting == 0 and queue.max_active == 1


def test_a_caller_who_does_not_wait_hears_nothing() -> None:
    queue = GenerationQueue()
    heard: list[int] = []
    queue.acquire(heard.append).release()
    assert heard == []


def test_a_full_queue_says_so_at_once() -> None:
    queue = GenerationQueue(limit=2, timeout_s=WAIT_S)
    held = queue.acquire()
    served: list[str] = []
    heard: dict[str, list[int]] = {}
    threads = [queue_up(queue, name, served, heard) for name in ("a", "b")]
    started = time.monotonic()
    with pytest.raises(QueueBusy, match=r"^The model is busy with 3 other questions; try again in a minute\.$"):
        queue.acquire()
    assert time.monotonic() - started < 0.5
    held.release()
    for thread in threads:
        thread.join(WAIT_S)
    assert served == ["a", "b"]


def test_a_wait_past_the_limit_gives_up_and_leaves_the_queue() -> None:
    queue = GenerationQueue(limit=8, timeout_s=0.3)
    held = queue.acquire()
    heard: list[int] = []
    with pytest.raises(QueueBusy, match=r"busy with 1 other question \(waited 0\.3 s\); try again in a minute"):
        queue.acquire(heard.append)
    assert heard and set(heard) == {1}
    assert queue.waiting == 0
    held.release()
    queue.acquire().release()  # nobody is left waiting in front


class Rerun(BaseException):
    """What Streamlit raises inside a script when the person acts while it runs."""


def test_a_listener_that_raises_leaves_the_queue_and_the_next_caller_moves_up() -> None:
    queue = GenerationQueue(limit=8, timeout_s=WAIT_S)
    held = queue.acquire()

    def leave(position: int) -> None:
        raise Rerun

    with pytest.raises(Rerun):
        queue.acquire(leave)
    assert queue.waiting == 0

    heard: list[int] = []
    late = threading.Thread(target=lambda: queue.acquire(heard.append).release())
    late.start()
    wait_until(lambda: queue.waiting == 1)
    assert heard[0] == 1  # only the generation running is ahead, not the caller who left
    held.release()
    late.join(WAIT_S)
    assert heard[-1] == 0 and queue.active == 0


def test_releasing_twice_frees_one_slot() -> None:
    queue = GenerationQueue()
    slot = queue.acquire()
    slot.release()
    slot.release()
    assert queue.active == 0
    other = queue.acquire()
    assert queue.active == 1
    other.release()


def test_never_two_slots_at_once_under_contention() -> None:
    queue = GenerationQueue(limit=16, timeout_s=WAIT_S)
    inside = 0
    most = 0
    guard = threading.Lock()

    def generate() -> None:
        nonlocal inside, most
        for _ in range(5):
            slot = queue.acquire()
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.002)
            with guard:
                inside -= 1
            slot.release()

    threads = [threading.Thread(target=generate) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S * 2)
    assert most == 1 and queue.max_active == 1 and queue.active == 0


def test_queue_wait_adds_up_the_time_between_a_place_and_the_turn() -> None:
    heard: list[int] = []
    wait = QueueWait(heard.append)
    wait(2)
    time.sleep(0.05)
    wait(1)
    time.sleep(0.05)
    wait(0)
    assert heard == [2, 1, 0]
    assert 0.09 <= wait.seconds < 1.0
    done = wait.seconds
    wait(0)  # a turn without a wait adds nothing
    assert wait.seconds == done
