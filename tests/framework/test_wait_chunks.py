"""rtcf.corba.client's bounded waits: wait_in_chunks calls until the answer says done, with
the chunk given or derived from the ORB's call timeout (a quarter of it, at most 2 s), and
lets a failing call's exception through."""

from __future__ import annotations

import subprocess
import sys

import pytest
from omniORB import CORBA

from rtcf.corba import client, orb


def test_calls_until_done_with_the_chunk_given():
    answers = iter([1, 1, 1, 0])
    seen = []

    def wait_for(t):
        seen.append(t)
        return next(answers)
    assert client.wait_in_chunks(wait_for, lambda r: r == 1, 0.25) == 0
    assert seen == [0.25] * 4


def test_a_failing_call_ends_the_wait():
    calls = []

    def wait_for(t):
        calls.append(t)
        if len(calls) == 3:
            raise CORBA.TIMEOUT(0, CORBA.COMPLETED_MAYBE)
        return 1
    with pytest.raises(CORBA.TIMEOUT):
        client.wait_in_chunks(wait_for, lambda r: r == 1, 0.1)
    assert len(calls) == 3


@pytest.mark.parametrize("timeout_ms, chunk", [(10000, 2.0), (1000, 0.25), (0, 2.0)])
def test_the_default_chunk_follows_the_call_timeout(monkeypatch, timeout_ms, chunk):
    monkeypatch.setattr(orb, "_call_timeout_ms", timeout_ms)
    assert client.wait_chunk() == chunk
    seen = []
    client.wait_in_chunks(lambda t: seen.append(t) or 0, lambda r: False)
    assert seen == [chunk]


@pytest.mark.parametrize("conf, want", [({}, "10.0 2.0"),
                                         ({"corba.args": "-ORBclientCallTimeOutPeriod 1500"},
                                          "1.5 0.375")])
def test_call_timeout_is_what_the_orb_was_given(conf, want):
    """In a fresh process: init_orb's arguments set call_timeout() and the chunk."""
    code = ("from rtcf.corba import client, orb; "
            f"orb.init_orb({conf!r}); print(orb.call_timeout(), client.wait_chunk())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == want.split()
