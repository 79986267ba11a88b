"""``rtcf-graph``: a picture of the running system (SVG, or PNG through matplotlib).

Components are boxes coloured by state, with in ports on the left edge, out ports on the
right and service ports below; connections are arrows from out to in (labelled with the
subscription type), service connections dashed; execution contexts are listed at the top
with kind, rate and their members in execution order, and each component carries a badge
``EC#position``. The layout is computed here (layers along the data flow, ordered to
reduce crossings; no Graphviz), as a list of shapes that two back ends draw: SVG text
(no dependency) and matplotlib (PNG, when installed).
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from dataclasses import dataclass, field

from .model import ComponentInfo, Snapshot

__all__ = ["layout", "to_svg", "to_png", "main", "STATE_COLOURS"]

STATE_COLOURS = {"ACTIVE": "#8fd694", "INACTIVE": "#c9d6e8", "ERROR": "#f08c8c",
                 "CREATED": "#e8e1c9", "UNKNOWN": "#dddddd", "UNREACHABLE": "#ffffff"}
FONT = 12
CHAR_W = 7.0          # [px] average width of a 12 px sans-serif character
ROW = 20              # [px] one port row
HEAD = 42             # [px] a box's title rows
GAP_X, GAP_Y = 150, 34
MARGIN = 24


@dataclass
class Shape:
    kind: str                   # rect | text | path (cubic Bézier) | poly (straight lines)
    x: float = 0
    y: float = 0
    w: float = 0
    h: float = 0
    text: str = ""
    fill: str = "none"
    stroke: str = "#333333"
    dash: bool = False
    size: float = FONT
    anchor: str = "start"       # start | middle | end
    bold: bool = False
    radius: float = 0
    points: list[tuple[float, float]] = field(default_factory=list)
    arrow: bool = False
    width: float = 1.2


def _tw(text: str, size: float = FONT) -> float:
    return len(text) * CHAR_W * size / FONT


def _layers(snap: Snapshot) -> dict[str, int]:
    """Longest-path layers along data connections, back edges of cycles ignored."""
    names = [c.name for c in snap.components]
    succ: dict[str, set[str]] = {n: set() for n in names}
    for k in snap.connections():
        if len(k.ports) == 2:
            a, b = (p.split(".", 1)[0] for p in k.ports)
            src, dst = _direction(snap, k.ports[0], k.ports[1], a, b)
            if src in succ and dst in succ and src != dst:
                succ[src].add(dst)
    state: dict[str, int] = {}
    order: list[str] = []
    back: set[tuple[str, str]] = set()

    def dfs(n: str) -> None:
        state[n] = 1
        for m in sorted(succ[n]):
            if state.get(m) == 1:
                back.add((n, m))
            elif m not in state:
                dfs(m)
        state[n] = 2
        order.append(n)

    for n in names:
        if n not in state:
            dfs(n)
    layer = {n: 0 for n in names}
    for n in reversed(order):
        for m in succ[n]:
            if (n, m) not in back:
                layer[m] = max(layer[m], layer[n] + 1)
    return layer


def _direction(snap: Snapshot, p0: str, p1: str, a: str, b: str) -> tuple[str, str]:
    ca, cb = snap.component(a), snap.component(b)
    pa = ca.port(p0) if ca else None
    if pa is not None and pa.direction == "in":
        return b, a
    pb = cb.port(p1) if cb else None
    if pb is not None and pb.direction == "out":
        return b, a
    return a, b


def _box_size(c: ComponentInfo) -> tuple[float, float]:
    ins = [p for p in c.ports if p.direction == "in"]
    outs = [p for p in c.ports if p.direction == "out"]
    svc = [p for p in c.ports if p.direction not in ("in", "out")]
    rows = max(len(ins), len(outs), 1)
    longest_in = max((_tw(p.name, 11) for p in ins), default=0)
    longest_out = max((_tw(p.name, 11) for p in outs), default=0)
    w = max(_tw(c.name, 13) + 30, _tw(c.type_name, 11) + 20, longest_in + longest_out + 40,
            130)
    h = HEAD + rows * ROW + (len(svc) * 16 + 6 if svc else 0) + 8
    return w, h


def layout(snap: Snapshot, title: str | None = None) -> tuple[list[Shape], float, float]:
    """The picture as shapes, and its width and height [px]."""
    shapes: list[Shape] = []
    layer = _layers(snap)
    cols: dict[int, list[ComponentInfo]] = {}
    for c in snap.components:
        cols.setdefault(layer[c.name], []).append(c)
    # order within a column by the mean row of the components feeding it (two sweeps)
    pos: dict[str, float] = {}
    for _ in range(2):
        for li in sorted(cols):
            col = cols[li]
            for i, c in enumerate(col):
                feeders = [pos[k.ports[0].split(".", 1)[0]] for p in c.ports
                           if p.direction == "in" for k in p.connectors
                           if k.ports and k.ports[0].split(".", 1)[0] in pos]
                pos.setdefault(c.name, float(i))
                if feeders:
                    pos[c.name] = sum(feeders) / len(feeders) + i * 1e-3
            col.sort(key=lambda c: pos[c.name])
            for i, c in enumerate(col):
                pos[c.name] = float(i)
    # EC legend at the top
    y = MARGIN
    title = title or f"rtcf system on {', '.join(snap.nameservers)}"
    shapes.append(Shape("text", MARGIN, y + 14, text=title, size=15, bold=True))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(snap.time))
    shapes.append(Shape("text", MARGIN, y + 32, text=f"{stamp}; {len(snap.components)} "
                        f"components, {len(snap.connections())} connections", size=11,
                        fill="#555555"))
    y += 46
    badges: dict[str, list[str]] = {}
    ec_w = 0.0
    for e in snap.ecs:
        name = e.properties.get("name") or e.id
        label = (f"EC {name}: {e.kind}, {e.rate:g} Hz{'' if e.running else ', stopped'} "
                 f"(owner {e.owner or '?'})  runs  " + "  \u2192  ".join(
                     f"{i + 1}. {m}" for i, m in enumerate(e.members)))
        w = _tw(label, 12) + 20
        shapes.append(Shape("rect", MARGIN, y, w, 24, fill="#f4f0ff", stroke="#7a62c9",
                            radius=12))
        shapes.append(Shape("text", MARGIN + 10, y + 16, text=label, fill="#3b2a80"))
        for i, m in enumerate(e.members):
            badges.setdefault(m, []).append(f"{name}#{i + 1}")
        ec_w = max(ec_w, w)
        y += 30
    # state legend
    lx = MARGIN
    y += 4
    for st in ("ACTIVE", "INACTIVE", "ERROR", "CREATED", "UNREACHABLE"):
        shapes.append(Shape("rect", lx, y, 14, 14, fill=STATE_COLOURS[st], stroke="#555555",
                            dash=st == "UNREACHABLE", radius=3))
        shapes.append(Shape("text", lx + 19, y + 11, text=st.lower(), size=11,
                            fill="#444444"))
        lx += 19 + _tw(st, 11) + 18
    y += 30
    top = y
    # boxes
    boxes: dict[str, tuple[float, float, float, float]] = {}
    port_xy: dict[str, tuple[float, float]] = {}
    x = MARGIN + 30          # room for back edges on the left
    max_y = top
    for li in sorted(cols):
        col = cols[li]
        sizes = [_box_size(c) for c in col]
        cw = max(w for w, _ in sizes)
        cy = top
        for c, (w, h) in zip(col, sizes):
            bx = x + (cw - w) / 2
            boxes[c.name] = (bx, cy, w, h)
            _draw_component(shapes, c, bx, cy, w, h, badges.get(c.name, []), port_xy)
            cy += h + GAP_Y
        max_y = max(max_y, cy)
        x += cw + GAP_X
    width = max(x - GAP_X + MARGIN + 10, ec_w + 2 * MARGIN, lx + MARGIN)
    # connections, drawn under the boxes' port markers (inserted first)
    edges: list[Shape] = []
    back = 0
    for k in snap.connections():
        if len(k.ports) != 2 or not all(p in port_xy for p in k.ports):
            continue
        a, b = k.ports
        ca = snap.component(a.split(".", 1)[0])
        pa = ca.port(a) if ca else None
        if pa is not None and pa.direction == "in":
            a, b = b, a
        (x0, y0), (x1, y1) = port_xy[a], port_xy[b]
        service = k.properties.get("dataport.data_type") is None and \
            "dataport.subscription_type" not in k.properties
        if service:
            mid = max(y0, y1) + 40
            pts = [(x0, y0), (x0, mid), (x1, mid), (x1, y1)]
            edges.append(Shape("path", points=pts, stroke="#7a62c9", dash=True, width=1.3))
            continue
        sub = k.properties.get("dataport.subscription_type", "")
        if x1 <= x0 + 20:       # a back edge (a cycle): around below the boxes it passes
            below = max((by + bh for bx, by, bw, bh in boxes.values()
                         if bx < x0 and bx + bw > x1), default=max(y0, y1)) + 16 + 10 * back
            back += 1
            pts = [(x0, y0), (x0 + 24, y0), (x0 + 24, below), (x1 - 24, below),
                   (x1 - 24, y1), (x1, y1)]
            edges.append(Shape("poly", points=pts, stroke="#2b5c8a", arrow=True, width=1.5))
            max_y = max(max_y, below + GAP_Y)
            if sub:
                edges.append(Shape("text", (x0 + x1) / 2, below - 4, text=sub, size=10,
                                   fill="#2b5c8a", anchor="middle"))
            continue
        dx = max(60.0, abs(x1 - x0) / 2.5)
        pts = [(x0, y0), (x0 + dx, y0), (x1 - dx, y1), (x1, y1)]
        edges.append(Shape("path", points=pts, stroke="#2b5c8a", arrow=True, width=1.5))
        if sub:
            mx, my = _bezier_mid(pts)
            edges.append(Shape("text", mx, my - 4, text=sub, size=10, fill="#2b5c8a",
                               anchor="middle"))
    height = max_y - GAP_Y + MARGIN + 40
    return edges + shapes, width, height


def _bezier_mid(p: list[tuple[float, float]]) -> tuple[float, float]:
    t = 0.5
    c = [(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3]
    return (sum(ci * q[0] for ci, q in zip(c, p)), sum(ci * q[1] for ci, q in zip(c, p)))


def _draw_component(shapes: list[Shape], c: ComponentInfo, x: float, y: float, w: float,
                    h: float, badges: list[str], port_xy: dict) -> None:
    fill = STATE_COLOURS.get(c.state.split(" ")[0], STATE_COLOURS["UNKNOWN"])
    shapes.append(Shape("rect", x, y, w, h, fill=fill, stroke="#333333", radius=8,
                        dash=c.state == "UNREACHABLE", width=1.4))
    shapes.append(Shape("text", x + 10, y + 17, text=c.name, size=13, bold=True))
    sub = f"{c.type_name} \u00b7 {c.state}" if c.type_name else c.state
    shapes.append(Shape("text", x + 10, y + 32, text=sub, size=10, fill="#333333"))
    if badges:
        text = " ".join(badges)
        bw = _tw(text, 10) + 10
        shapes.append(Shape("rect", x + w - bw - 4, y - 9, bw, 16, fill="#f4f0ff",
                            stroke="#7a62c9", radius=8))
        shapes.append(Shape("text", x + w - bw / 2 - 4, y + 3, text=text, size=10,
                            fill="#3b2a80", anchor="middle"))
    ins = [p for p in c.ports if p.direction == "in"]
    outs = [p for p in c.ports if p.direction == "out"]
    svc = [p for p in c.ports if p.direction not in ("in", "out")]
    for i, p in enumerate(ins):
        py = y + HEAD + i * ROW + ROW / 2
        shapes.append(Shape("rect", x - 6, py - 5, 10, 10, fill="#ffffff", stroke="#2b5c8a"))
        shapes.append(Shape("text", x + 8, py + 4, text=p.name, size=11))
        port_xy[p.full_name] = (x - 6, py)
    for i, p in enumerate(outs):
        py = y + HEAD + i * ROW + ROW / 2
        shapes.append(Shape("rect", x + w - 4, py - 5, 10, 10, fill="#2b5c8a",
                            stroke="#2b5c8a"))
        shapes.append(Shape("text", x + w - 8, py + 4, text=p.name, size=11, anchor="end"))
        port_xy[p.full_name] = (x + w + 6, py)
    rows = max(len(ins), len(outs), 1)
    sy = y + HEAD + rows * ROW + 6
    for i, p in enumerate(svc):
        py = sy + i * 16 + 8
        shapes.append(Shape("rect", x + 8, py - 5, 9, 9, fill="#f4f0ff", stroke="#7a62c9"))
        shapes.append(Shape("text", x + 22, py + 3, text=f"{p.name} (service)", size=10,
                            fill="#3b2a80"))
        port_xy[p.full_name] = (x + 12, y + h)


# -- back ends ---------------------------------------------------------------------------------

def to_svg(shapes: list[Shape], width: float, height: float) -> str:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" xml:space="preserve" '
           f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
           'fill="#2b5c8a"/></marker></defs>',
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>']
    for s in shapes:
        dash = ' stroke-dasharray="5,3"' if s.dash else ""
        if s.kind == "rect":
            out.append(f'<rect x="{s.x:.1f}" y="{s.y:.1f}" width="{s.w:.1f}" '
                       f'height="{s.h:.1f}" rx="{s.radius}" fill="{s.fill}" '
                       f'stroke="{s.stroke}" stroke-width="{s.width}"{dash}/>')
        elif s.kind == "text":
            fill = s.fill if s.fill != "none" else "#111111"
            weight = ' font-weight="bold"' if s.bold else ""
            out.append(f'<text x="{s.x:.1f}" y="{s.y:.1f}" font-size="{s.size}" '
                       f'fill="{fill}" text-anchor="{s.anchor}"{weight}>'
                       f'{html.escape(s.text)}</text>')
        elif s.kind in ("path", "poly"):
            (x0, y0), *rest = s.points
            d = f"M {x0:.1f} {y0:.1f} {'C' if s.kind == 'path' else 'L'} " + \
                " ".join(f"{x:.1f} {y:.1f}" for x, y in rest)
            marker = ' marker-end="url(#arrow)"' if s.arrow else ""
            out.append(f'<path d="{d}" fill="none" stroke="{s.stroke}" '
                       f'stroke-width="{s.width}"{dash}{marker}/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def to_png(shapes: list[Shape], width: float, height: float, path: str,
           dpi: int = 100) -> None:
    """Draw with matplotlib (ImportError when it is not installed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, PathPatch
    from matplotlib.path import Path as MPath
    scale = 1.0
    fig = plt.figure(figsize=(width * scale / dpi, height * scale / dpi), dpi=dpi)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    pt = 72.0 / dpi          # px -> points
    for s in shapes:
        ls = (0, (5, 3)) if s.dash else "solid"
        if s.kind == "rect":
            r = min(s.radius, s.w / 2, s.h / 2)
            ax.add_patch(FancyBboxPatch((s.x + r, s.y + r), max(s.w - 2 * r, 0.1),
                                        max(s.h - 2 * r, 0.1),
                                        boxstyle=f"round,pad={r}" if r else "square,pad=0",
                                        fc=s.fill if s.fill != "none" else "none",
                                        ec=s.stroke, lw=s.width * pt, ls=ls))
        elif s.kind == "text":
            ax.text(s.x, s.y, s.text, fontsize=s.size * pt, ha={"start": "left",
                    "middle": "center", "end": "right"}[s.anchor], va="baseline",
                    color=s.fill if s.fill != "none" else "#111111",
                    fontweight="bold" if s.bold else "normal")
        elif s.kind in ("path", "poly"):
            step = MPath.CURVE4 if s.kind == "path" else MPath.LINETO
            codes = [MPath.MOVETO] + [step] * (len(s.points) - 1)
            mp = MPath(s.points, codes)
            if s.arrow:
                ax.add_patch(FancyArrowPatch(path=mp, arrowstyle="-|>", mutation_scale=12,
                                             color=s.stroke, lw=s.width * pt, ls=ls))
            else:
                ax.add_patch(PathPatch(mp, fc="none", ec=s.stroke, lw=s.width * pt, ls=ls))
    fig.savefig(path, dpi=dpi, facecolor="white", format="png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    from .cli import add_nameserver_arg, run_tool
    p = argparse.ArgumentParser(
        prog="rtcf-graph",
        description="Draw the running system: components (colour = state), ports, "
                    "connections, execution contexts and their members.")
    p.add_argument("-o", "--output", metavar="FILE.svg|FILE.png", default="-",
                   help="where to write (default: SVG on stdout); .png needs matplotlib")
    add_nameserver_arg(p)
    p.add_argument("--json", action="store_true",
                   help="write the snapshot as JSON instead of a picture")
    args = p.parse_args(argv)
    return run_tool("rtcf-graph", lambda: _graph(args), argv)


def _graph(args: argparse.Namespace) -> int:
    from .session import Session, ToolError
    out = args.output
    if out != "-" and not args.json and not out.lower().endswith((".svg", ".png")):
        raise ToolError(f"{out}: the picture is written as .svg or .png")
    if out != "-":
        from .cli import check_output
        check_output(out)
    snap = Session(args.nameserver).snapshot()
    if not snap.components:
        raise ToolError(snap.errors[0] if snap.errors else
                        f"no components on {', '.join(snap.nameservers)}")
    for e in snap.errors:
        print(f"rtcf-graph: {e}", file=sys.stderr)
    if args.json:
        try:
            _write_text(out, snap.to_json(indent=1))
        except OSError as e:
            raise ToolError(f"{out}: cannot write it ({e.strerror or e})") from None
        return 0
    shapes, w, h = layout(snap)
    try:
        _write_picture(out, shapes, w, h)
    except OSError as e:
        raise ToolError(f"{out}: cannot write it ({e.strerror or e})") from None
    if out != "-":
        print(f"rtcf-graph: wrote {out} ({len(snap.components)} components, "
              f"{len(snap.connections())} connections, {len(snap.ecs)} execution contexts)",
              file=sys.stderr)
    return 0


def _write_picture(out: str, shapes: list, w: float, h: float) -> None:
    from .session import ToolError
    if out.lower().endswith(".png"):
        try:
            to_png(shapes, w, h, out + ".part")
        except ImportError:
            raise ToolError("writing PNG needs matplotlib (.venv/bin/pip install "
                            "'matplotlib>=3.5', the demo extra); or write .svg and convert "
                            "it with a browser or rsvg-convert") from None
        import os
        os.replace(out + ".part", out)
    else:
        _write_text(out, to_svg(shapes, w, h))


def _write_text(out: str, text: str) -> None:
    if out == "-":
        sys.stdout.write(text)
        return
    import os
    with open(out + ".part", "w") as f:
        f.write(text)
    os.replace(out + ".part", out)


if __name__ == "__main__":
    sys.exit(main())
