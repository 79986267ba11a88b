"""Local interfaces of service ports (rtcf.services): Python objects shared by components of
one process, bound only by a declared connection. connect_services binds them (alone with
local=True, as the manager does beside the CORBA connection); a required local interface
that the connections leave unbound is reported, naming the port, the type and the hint; a
connection to a port without one is reported as such."""

from __future__ import annotations

from rtcf.services import ServicePort, connect_services, local_binding_problems


class Owner:
    def __init__(self, name):
        self.instance_name = name


def ports():
    dcm = ServicePort("DCMService")
    dcm.owner = Owner("DCM0")
    servant, body = object(), object()
    dcm.provide("service0", "DCMService", servant)
    dcm.provide("local", "DCMLocal", body, local=True)
    cm = ServicePort("hardware")
    cm.owner = Owner("CM0")
    link = cm.require("hardware", "DCMLocal", local=True, hint="connect CM0.hardware")
    remote = cm.require("dcm", "DCMService")
    return dcm, cm, link, remote, servant, body


def test_local_only_binding_leaves_the_corba_interfaces_to_the_orb():
    dcm, cm, link, remote, servant, body = ports()
    assert connect_services(cm, dcm, local=True) == 1
    assert link.ref is body and remote.ref is None


def test_without_an_orb_both_kinds_bind_each_to_its_own_kind():
    dcm, cm, link, remote, servant, body = ports()
    assert connect_services(cm, dcm) == 2
    assert link.ref is body and remote.ref is servant


def test_an_unbound_local_requirement_is_reported_with_its_hint():
    dcm, cm, link, *_ = ports()
    other = ServicePort("KinematicsService")
    other.owner = Owner("Kinematics0")
    other.provide("service0", "KinematicsService", object())
    assert local_binding_problems([cm, dcm], [(cm, dcm)]) == []
    [(owner, msg)] = local_binding_problems([cm], [])
    assert owner.instance_name == "CM0"
    assert msg == ("service port 'hardware' needs a DCMLocal (hardware, in this process) and "
                   "is not connected: connect CM0.hardware")
    [(_, msg)] = local_binding_problems([cm], [(other, cm)])
    assert "is connected to Kinematics0.KinematicsService, which provides no local " \
           "DCMLocal" in msg
    assert link.ref is None                        # a check binds nothing
