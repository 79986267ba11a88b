"""rtcf.log.Throttled: at most one message per interval, the suppressed ones counted."""

from __future__ import annotations

import logging

import pytest

import rtcf.log
from rtcf.log import Throttled


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    c = _Clock()
    monkeypatch.setattr(rtcf.log, "_monotonic", c)
    return c


@pytest.mark.parametrize("method, level", [("warning", logging.WARNING),
                                           ("error", logging.ERROR),
                                           ("log", logging.INFO)])
def test_one_message_per_interval_and_the_next_one_counts_the_suppressed(
        clock: _Clock, caplog: pytest.LogCaptureFixture, method: str, level: int) -> None:
    log = logging.getLogger("rtcf.test_throttled")
    t = Throttled(log, 5.0)
    say = getattr(t, method)
    if method == "log":
        say = lambda msg, *args: t.log(level, msg, *args)   # noqa: E731
    with caplog.at_level(logging.DEBUG, logger="rtcf.test_throttled"):
        assert say("speed %d", 1) is True
        clock.t += 4.9
        assert say("speed %d", 2) is False
        assert say("speed %d", 3) is False
        clock.t += 0.1                      # 5 s after the first: due again
        assert say("speed %d", 4) is True
        assert say("speed %d", 5) is False
        clock.t += 5.0
        assert say("speed %d", 6) is True
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (level, "speed 1"),
        (level, "speed 4 (2 similar messages suppressed)"),
        (level, "speed 6 (1 similar messages suppressed)"),
    ]


def test_warning_and_error_share_one_interval_and_one_count(
        clock: _Clock, caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("rtcf.test_throttled")
    t = Throttled(log, 1.0)
    with caplog.at_level(logging.DEBUG, logger="rtcf.test_throttled"):
        assert t.warning("a") is True
        assert t.error("b") is False
        assert t.warning("c") is False
        clock.t += 1.0
        assert t.error("d %s", "x") is True
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "a"), (logging.ERROR, "d x (2 similar messages suppressed)")]
