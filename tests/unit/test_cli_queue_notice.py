"""`ragchat ask` tells the person on stderr while the question waits for the busy model, once per change."""

from __future__ import annotations

import pytest

from ragchat.cli.ask import _QueueNotice


def test_the_notice_says_each_new_place_once_and_when_the_turn_comes(capsys: pytest.CaptureFixture[str]) -> None:
    notice = _QueueNotice()
    for ahead in (2, 2, 2, 1, 0):
        notice(ahead)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "Queued: 2 questions ahead of yours…",
        "Queued: 1 question ahead of yours…",
        "The model is answering yours now.",
    ]
