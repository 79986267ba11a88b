"""The report extension point of Component (status, summary, log_warnings): the manager's
status line, its periodic warnings and its final report take each component's own lines,
with no knowledge of the component; a component without them adds nothing, and one whose
hook raises loses its own words, never the line."""

from __future__ import annotations

import logging

from rtcf import Component, Param
from rtcf.composition import parse_composition
from rtcf.manager import Manager


class Talker(Component):
    type_name = "Talker"
    words = Param(str, "3 widgets", read_only=True)

    def on_initialize(self):
        self.warned = []

    def status(self):
        if self.words == "boom":
            raise RuntimeError("no words")
        return self.words

    def summary(self):
        return f"made {self.words}"

    def log_warnings(self, now):
        self.warned.append(now)
        self.log.warning("%s needs attention", self.instance_name)


class Quiet(Component):
    type_name = "Quiet"


def test_the_manager_reports_each_components_own_lines(caplog):
    m = Manager({}, corba=False)
    for cls in (Talker, Quiet):
        m.register(cls)
    comp = parse_composition({"name": "talk", "components": [
        {"type": "Talker"}, {"type": "Talker", "name": "loud", "params": {"words": "boom"}},
        {"type": "Quiet"}], "execution_contexts": [
        {"name": "main", "kind": "stepped", "rate": 10,
         "members": ["Talker0", "loud", "Quiet0"]}]}, "talk.yaml")
    try:
        m.build(comp)
        line = m.status_line()
        assert "| Talker0: 3 widgets" in line
        assert "| loud: status failed (no words)" in line
        assert "| Quiet0" not in line                          # no words of its own
        with caplog.at_level(logging.WARNING):
            m.log_overruns(42.0)
        assert m.components["Talker0"].warned == [42.0]
        assert "Talker0 needs attention" in caplog.text
        report = m.final_report()
        assert "Talker0: made 3 widgets" in report and "Quiet0" not in report
    finally:
        m.shutdown()
