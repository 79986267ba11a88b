"""The seqlock hand-over of hardware.py, and DcmHardware bound to a DCM through its local
interface (the declared binding, not a lookup by name)."""

from __future__ import annotations

import numpy as np

import pytest

from rtcf.services import connect_services

from rtcf_components.controller_manager.hardware import DcmHardware, SeqBuffer
from rtcf_components.dcm.component import DCM
from rtcf_components.kinematics.model import load_model


def test_seqbuffer_hands_over_the_newest_rows_once():
    buf = SeqBuffer(2, 3)
    out = np.zeros((2, 3))
    assert buf.read(out, -1) == 0                  # the initial (zero) content, seq 0
    buf.write(np.array([1.0, 2, 3]), np.array([4.0, 5, 6]))
    seq = buf.read(out, 0)
    assert seq == 2 and out.tolist() == [[1, 2, 3], [4, 5, 6]]
    out[:] = -1
    assert buf.read(out, seq) == seq and out[0, 0] == -1     # nothing new: untouched


def test_seqbuffer_keeps_the_old_values_when_the_writer_is_mid_copy():
    buf = SeqBuffer(1, 2)
    out = np.full((1, 2), 7.0)
    buf.seq = 5                                    # odd: a write in progress
    assert buf.read(out, 4) == 4 and out.tolist() == [[7.0, 7.0]]


def test_dcm_hardware_binds_to_the_dcm_its_port_is_connected_to():
    from rtcf.services import ServicePort
    dcm = DCM("DCM7")
    dcm.initialize()
    try:
        port = ServicePort("hardware")
        link = port.require("hardware", "DCMLocal", local=True)
        assert connect_services(port, dcm.service_ports["DCMService"]) == 1
        assert link.ref is dcm                       # the DCM itself, no CORBA in between
        hw = DcmHardware(load_model("nao_h25_v5").joint_names)
        assert hw.halted                             # unbound: nothing to drive
        hw.bind(link.ref)
        assert hw.dcm is dcm
        other = DcmHardware(load_model("doosan_m1013").joint_names)
        with pytest.raises(ValueError, match=r"the DCM 'DCM7' has the joints HeadYaw"):
            other.bind(dcm)
        hw.detach()
    finally:
        dcm.finalize()
