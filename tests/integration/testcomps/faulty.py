"""Test components loaded by the integration tests' managers (``module: faulty``)."""

from __future__ import annotations

from rtcf import Component, Param


class Faulty(Component):
    """Raises in on_execute while ``fail`` is YES (drives a component into Error).

    No ports: its state is the only thing the tests look at.
    """

    category = "test"
    fail = Param(bool, False, doc="raise in on_execute while YES")

    def on_initialize(self) -> None:
        self.executions = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        self.executions += 1
        if self.fail:
            raise RuntimeError("Faulty: fail is YES")


class InitFails(Component):
    """Raises in on_initialize (a launch that fails after other components were created)."""

    category = "test"

    def on_initialize(self) -> None:
        raise RuntimeError("InitFails: on_initialize raises on purpose")
