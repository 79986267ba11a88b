"""rtcf.testing.SimSystem: a composition built in process on a paused simulation time base.
It names components as the command line does (two unnamed Gains are Gain0 and Gain1, each
with its own parameters), refuses parameters for an instance the composition does not
declare, and runs exactly the cycles due in the time it is advanced."""

from __future__ import annotations

import pytest

from rtcf.errors import CompositionError
from rtcf.testing import SimSystem

COMPOSITION = """\
name: two_gains
components:
  - {type: SineGenerator, module: examples, params: {channels: 1}}
  - {type: Gain, module: examples, params: {gain: 3.0}}
  - {type: Gain, module: examples, params: {gain: 5.0}}
connections:
  - {from: SineGenerator0.out, to: Gain0.in, subscription_type: flush}
  - {from: SineGenerator0.out, to: Gain1.in, subscription_type: flush}
execution_contexts:
  - {name: main, kind: periodic, rate: 100, members: [SineGenerator0, Gain0, Gain1]}
"""


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "two_gains.yaml"
    p.write_text(COMPOSITION)
    return p


def test_unnamed_components_get_the_command_lines_names_and_their_own_params(path):
    with SimSystem(path, params={"Gain1": {"gain": 7.0}}) as s:
        assert (s["Gain0"].gain, s["Gain1"].gain) == (3.0, 7.0)
        s.advance(0.1)
        assert s.now == pytest.approx(0.1)
        assert s.manager.ecs["main"].cycles == 10


def test_params_for_an_undeclared_instance_are_refused_naming_it(path):
    with pytest.raises(CompositionError, match="'Gain2'.*Gain0"):
        SimSystem(path, params={"Gain2": {"gain": 1.0}})
