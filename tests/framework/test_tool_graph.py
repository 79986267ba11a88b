"""rtcf.tools.graph: the layout and its SVG from a snapshot given as data (no ORB)."""

import xml.dom.minidom

from rtcf.tools.graph import STATE_COLOURS, layout, to_svg
from rtcf.tools.model import ComponentInfo, ConnectorInfo, ContextInfo, PortInfo, Snapshot

DT = "IDL:RTC/TimedDoubleSeq:1.0"


def _conn(cid, a, b, sub="flush"):
    return ConnectorInfo(cid, cid, [a, b], {"dataport.subscription_type": sub,
                                            "dataport.data_type": DT})


def snapshot():
    k1, k2 = _conn("k1", "a.out", "b.in"), _conn("k2", "b.out", "a.in", "new")
    a = ComponentInfo("a", "h:1/a.rtc", "h:1", "a.rtc", type_name="A", state="ACTIVE",
                      ports=[PortInfo("in", "a.in", "in", DT, connectors=[k2]),
                             PortInfo("out", "a.out", "out", DT, connectors=[k1])],
                      owned_ecs=["a:0"])
    b = ComponentInfo("b", "h:1/b.rtc", "h:1", "b.rtc", type_name="B", state="ERROR",
                      ports=[PortInfo("in", "b.in", "in", DT, connectors=[k1]),
                             PortInfo("out", "b.out", "out", DT, connectors=[k2]),
                             PortInfo("Svc", "b.Svc", "service",
                                      interfaces=["provided X.x"])],
                      participating_ecs=["a:0"])
    c = ComponentInfo("c", "h:1/c.rtc", "h:1", "c.rtc", state="UNREACHABLE")
    ec = ContextInfo("a:0", "a", 0, "PERIODIC", 100.0, True, ["a", "b"],
                {"a": "ACTIVE", "b": "ERROR"}, {"name": "main"})
    return Snapshot(0.0, ["h:1"], [a, b, c], [ec])


def test_layout_and_svg():
    shapes, w, h = layout(snapshot())
    texts = [s.text for s in shapes if s.kind == "text"]
    assert "a" in texts and "b" in texts and "c" in texts
    assert any(t.startswith("EC main: PERIODIC, 100 Hz") and "1. a" in t and "2. b" in t
               for t in texts)
    assert "main#1" in texts and "main#2" in texts
    fills = {s.fill for s in shapes if s.kind == "rect"}
    assert STATE_COLOURS["ACTIVE"] in fills and STATE_COLOURS["ERROR"] in fills
    assert any(s.kind == "rect" and s.dash and s.fill == STATE_COLOURS["UNREACHABLE"]
               for s in shapes)
    # a.out -> b.in forward (a Bézier), b.out -> a.in closes the loop (routed below)
    assert sorted(s.kind for s in shapes if s.arrow) == ["path", "poly"]
    assert "Svc (service)" in texts and "new" in texts and "flush" in texts
    # every shape inside the picture
    for s in shapes:
        xs = [p[0] for p in s.points] or [s.x, s.x + s.w]
        ys = [p[1] for p in s.points] or [s.y, s.y + s.h]
        assert min(xs) >= 0 and max(ys) <= h and min(ys) >= 0, s
    svg = to_svg(shapes, w, h)
    doc = xml.dom.minidom.parseString(svg)                 # well-formed
    assert len(doc.getElementsByTagName("text")) == len(texts)
