"""A component with a *required* DCMService interface (``module: dcmclient``): each cycle it
asks the DCM for its time and writes it out, so a test sees the binding work."""

from __future__ import annotations

import numpy as np

from rtcf import Component, TimedDoubleSeq
from rtcf.services import ServicePort


class DcmClient(Component):
    """| port | type | unit | meaning |
    |---|---|---|---|
    | dcm | service | - | requires DCMService (instance "dcm") |
    | time | TimedDoubleSeq | ms | [DCM time] read through the required interface |
    """

    category = "test"

    def on_initialize(self) -> None:
        from rtcf.corba.idl import stub_module
        port = self.add_service_port(ServicePort("dcm"))
        self.dcm = port.require("dcm", "DCMService", stub=stub_module("NAO").DCMService)
        self.out = self.add_out_port("time", TimedDoubleSeq)
        self.out.value.data = np.zeros(1)
        self.calls = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        if self.dcm.connected:
            self.out.value.data[0] = self.dcm.getTime(0)
            self.calls += 1
            self.out.write()
