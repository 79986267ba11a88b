"""A follower's view of the leader's time control (rtcf.corba.lockstep.RemoteLeader)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from omniORB import CORBA

from rtcf.corba.lockstep import RemoteLeader


class _Leader:
    """Answers state() until it is gone, then fails as a dead process does."""

    def __init__(self, how: type = CORBA.COMM_FAILURE) -> None:
        self.gone = False
        self.paused = False
        self.how = how

    def state(self) -> SimpleNamespace:
        if self.gone:
            raise self.how(0, CORBA.COMPLETED_NO)
        return SimpleNamespace(paused=self.paused, real_time_factor=2.5)

    def pause(self, wait: bool) -> None:
        raise CORBA.COMM_FAILURE(0, CORBA.COMPLETED_NO)


@pytest.mark.parametrize("how", [CORBA.COMM_FAILURE, CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST,
                                 CORBA.OBJ_ADAPTER])
def test_a_gone_leader_leaves_the_last_state_it_told_for_the_final_report(how):
    """OBJ_ADAPTER: the leader's adapter is gone while its ORB still answers (seen on a
    busy machine: the follower's final report then ended the process with a traceback)."""
    ref = _Leader(how)
    leader = RemoteLeader(ref)
    ref.paused = True
    assert leader.real_time_factor == 2.5 and leader.paused
    ref.gone = True                     # the run ended: the follower writes its report after
    assert leader.real_time_factor == 2.5 and leader.paused


def test_asking_a_gone_leader_to_act_still_fails():
    leader = RemoteLeader(_Leader())
    with pytest.raises(CORBA.COMM_FAILURE):
        leader.pause()
