"""rtcf.corba.naming against a private omniNames on a free loopback port."""

import os
import socket
import subprocess

import CosNaming__POA
import pytest

from rtcf.corba import naming, orb


@pytest.fixture(scope="module")
def ns(request):
    handle = naming.ensure_naming_service(port=naming.free_port(), timeout=15)
    request.addfinalizer(handle.stop)
    return handle


@pytest.fixture(scope="module")
def client(ns):
    return naming.NamingClient(orb.init_orb({}), f"127.0.0.1:{ns.port}")


def test_started_private_service_on_loopback_only(ns):
    assert ns.started and ns.proc.poll() is None
    out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
    lines = [ln for ln in out.splitlines() if f":{ns.port} " in ln]
    assert lines and all("127.0.0.1:" in ln for ln in lines), out
    # a second ensure finds it instead of starting another
    again = naming.ensure_naming_service(port=ns.port)
    assert not again.started
    again.stop()  # no-op for a service we did not start
    assert ns.proc.poll() is None


class _Leaf(CosNaming__POA.BindingIterator):
    """Any servant that is not a naming context."""

    def next_one(self):
        return False, None

    def next_n(self, how_many):
        return False, []

    def destroy(self):
        pass


@pytest.fixture(scope="module")
def leaf(client):
    servant = _Leaf()
    obj = servant._this()  # activates on the root POA
    yield obj
    poa = orb.root_poa()
    poa.deactivate_object(poa.servant_to_id(servant))


def test_bind_resolve_list_unbind(client, leaf):
    obj = leaf
    path = "myhost.host_cxt/comp0.rtc"
    client.bind(path, obj)
    client.bind(path, obj)  # rebinding is fine
    assert client.resolve(path)._is_equivalent(obj)
    assert ("myhost", "host_cxt", True) in client.list()
    assert client.list("myhost.host_cxt") == [("comp0", "rtc", False)]
    client.bind([("myhost", "host_cxt"), ("sub", "cxt"), ("deep", "rtc")], obj)
    assert ("sub", "cxt", True) in client.list("myhost.host_cxt")
    assert client.unbind(path)
    assert not client.unbind(path)
    with pytest.raises(LookupError):
        client.resolve(path)
    with pytest.raises(ValueError):  # comp is a leaf, not a context
        client.bind("myhost.host_cxt/sub.cxt/deep.rtc/x.rtc", obj)


def test_reregistrar_restores_a_removed_binding(client):
    path = "rereg.host_cxt/c.rtc"
    r = naming.Reregistrar(client, {path: client.root}, interval=0.05).start()
    try:
        client.bind(path, client.root)
        client.unbind(path)
        import time
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                client.resolve(path)
                break
            except LookupError:
                time.sleep(0.02)
        client.resolve(path)
    finally:
        r.stop()
    assert not r._thread.is_alive()


def test_stop_terminates_the_process():
    handle = naming.ensure_naming_service(port=naming.free_port(), timeout=15)
    try:
        proc, logdir = handle.proc, handle.log_dir
        assert naming.naming_service_alive(port=handle.port)
    finally:
        handle.stop()
    assert proc.poll() is not None
    assert not handle.started
    assert not logdir.exists()  # the private log folder is removed


def test_no_start_and_remote_host_refused():
    port = naming.free_port()
    with pytest.raises(ConnectionError):
        naming.ensure_naming_service(port=port, start=False)
    with pytest.raises(ConnectionError, match="loopback"):
        naming.ensure_naming_service(host="192.0.2.1", port=port, timeout=1)


def test_format_name_default():
    assert naming.format_name(instance="seq0") == [(socket.gethostname(), "host_cxt"),
                                                   ("seq0", "rtc")]


@pytest.mark.parametrize("fmt,expected", [
    ("%n.rtc", [("comp", "rtc")]),
    ("%h.host_cxt/%M.mgr_cxt/%c.cat_cxt/%m.%n.rtc",
     [("h.example.org", "host_cxt"), ("mgr", "mgr_cxt"), ("Motion", "cat_cxt"),
      ("SeqPlayer.comp", "rtc")]),
    ("%v_%V/%t%p", [("AIST_1", "0"), ("SeqPlayer4242", "")]),  # the last dot starts the kind
    ("100%%/%n.rtc", [("100%", ""), ("comp", "rtc")]),
])
def test_format_name_cases(fmt, expected):
    fields = dict(instance="comp", type="SeqPlayer", hostname="h.example.org",
                  vendor="AIST", version="1.0", category="Motion", manager="mgr", pid=4242)
    assert naming.format_name(fmt, **fields) == expected


def test_format_name_errors_and_many():
    with pytest.raises(ValueError, match="%q"):
        naming.format_name("%q.rtc", instance="x")
    with pytest.raises(ValueError, match="empty"):
        naming.format_name("%n.rtc")
    with pytest.raises(TypeError):
        naming.format_name("%n.rtc", bogus=1)
    names = naming.format_names("%n.rtc, a.b/%n.rtc", n="c")
    assert names == [[("c", "rtc")], [("a", "b"), ("c", "rtc")]]
    assert naming.format_name("%p.rtc", instance="x") == [(str(os.getpid()), "rtc")]
