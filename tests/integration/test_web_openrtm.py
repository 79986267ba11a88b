"""The web view's parameter edit on an OpenRTM-aist-style component: the suite's peer
(openrtm_peer.py, no rtcf) serves an RTC::RTObject whose SDO configuration behaves as
OpenRTM-aist-Python's (after set_configuration_set_values no set is active until
activate_configuration_set). Editing a value from the page must leave the component with
its active set, the new value applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_web_view import WebServer

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"


@pytest.fixture
def aist(naming: Any, tmp_path: Path, it: Any) -> Any:
    from test_openrtm_peer import PeerProcess
    (tmp_path / "peer").mkdir()
    peer = PeerProcess(tmp_path / "peer")
    assert peer.cmd("rtobject", ns=f"127.0.0.1:{naming.port}",
                    context=f"{it.HOST}.host_cxt", rtc="aist0")["ok"]
    yield peer
    peer.cmd("unbind")
    peer.close()


def test_page_edit_leaves_the_openrtm_component_with_its_active_set(
        aist: Any, naming: Any, tmp_path: Path) -> None:
    server = WebServer(naming.port, tmp_path)
    try:
        comp = next(c for c in server.system()["components"] if c["name"] == "aist0")
        assert comp["config"]["active"] == "default"
        code, body = server.post("api/param", {"component": "aist0", "set": "default",
                                                "name": "gain", "value": "2.5"})
        assert code == 200, body
        cfg = aist.cmd("config")
        assert cfg["active"] == "default" and cfg["applied"] == {"gain": "2.5"}
        # another set edited: stored, and the active one stays active and applied
        code, body = server.post("api/param", {"component": "aist0", "set": "fast",
                                                "name": "gain", "value": "7"})
        assert code == 200, body
        cfg = aist.cmd("config")
        assert cfg["active"] == "default" and cfg["applied"] == {"gain": "2.5"}
        assert cfg["sets"]["fast"] == {"gain": "7"}
    finally:
        server.stop()
