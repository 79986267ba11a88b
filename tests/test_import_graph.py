"""The rooms and their arrows, read from the code (ast over every .py file, lazy imports in
functions included): the framework imports no component, the component packages import
each other without a circle, and each component's core imports neither rtcf nor omniORB.

The packages under components/ (``rtcf_components.<name>``) are of two kinds: component
packages (an RT component in ``component.py``) and tool packages (``TOOLS``: client
libraries and test harnesses that drive components; none of the component packages may
import them). A component package's modules are its core, except the shell
(``component.py``), the servant (``service.py``), the CORBA client (``proxy.py``) and the
modules ``SHELL_SIDE`` names with the reason they need rtcf. The core of each package is
printed by ``test_print_the_rooms`` (``pytest -s``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = ROOT / "components"
PACKAGE = "rtcf_components"
MIDDLEWARE = ("rtcf", "omniORB", "CORBA", "PortableServer", "CosNaming")

#: packages under components/ that are not components: they may use the component packages
TOOLS = {
    "clients": "client proxies for user scripts (NAOqi ALProxy, DRL, ...): CORBA clients",
    "scenarios": "the shipped simulation systems driven in process, and their figures",
}

#: modules of a component package, besides component / service / proxy, that use rtcf
SHELL_SIDE = {
    "blending_planner": {"dsr": "the DRL call library of user scripts, over the proxy",
                         "dsr_motion": "DRL motion calls of user scripts: the proxy, CORBA",
                         "dsr_state": "DRL state / math calls of user scripts, over dsr_motion",
                         "dsr_rclpy": "rclpy / DR_init stand-ins of user scripts: the proxy",
                         "dsr_run": "runs a doosan-robot2 script against the running planner",
                         "__init__": "re-exports the BlendingPlanner component class"},
    "controller_manager": {
        "hardware": "the shell's hardware bindings: its ports (ReadStatus, stamps)",
        "sim_hardware": "the shell's simulator binding: its qRef in-port (ReadStatus)",
        "cli": "rtcf-controllers, a CORBA client of the manager's service",
        "web": "the web view's controllers panel: a CORBA client, in the view's process",
    },
    "examples": {"components": "the example components themselves (shells)",
                 "__init__": "re-exports the example components"},
}
SHELL_NAMES = {"component", "service", "proxy"}


def _py_files(folder: Path):
    for path in sorted(folder.rglob("*.py")):
        if "_gen" not in path.parts and "__pycache__" not in path.parts:
            yield path


def module_name(path: Path) -> str:
    """``rtcf.web.server``, ``rtcf_components.dcm.component``, ``...dcm`` for __init__."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "components":
        parts[0] = PACKAGE
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative ones resolved,
    and of importlib.import_module / __import__ calls with a literal name."""
    mod = module_name(path)
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
            # ``from . import x`` / ``from pkg import mod``: x may be a module
            out += [(node.lineno, f"{name}.{a.name}") for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if fname in ("import_module", "__import__"):
                out.append((node.lineno, node.args[0].value))
    return out


def bundled() -> list[str]:
    return sorted(p.name for p in COMPONENTS.iterdir() if (p / "__init__.py").is_file())


def package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == PACKAGE and len(parts) > 1 else None


def core_modules(pkg: str) -> list[str]:
    """The core of a component package: its modules but the shell-side ones."""
    shell = SHELL_NAMES | set(SHELL_SIDE.get(pkg, {}))
    return [module_name(p) for p in _py_files(COMPONENTS / pkg)
            if p.stem not in shell]


def all_modules() -> dict[str, Path]:
    out = {}
    for folder in (ROOT / "rtcf", COMPONENTS):
        for p in _py_files(folder):
            out[module_name(p)] = p
    return out


def test_the_framework_imports_no_component():
    names = set(bundled()) | {PACKAGE}
    offenders = [f"{p.relative_to(ROOT)}:{line}: {name}"
                 for p in _py_files(ROOT / "rtcf") for line, name in imports_of(p)
                 if name.split(".")[0] in names]
    assert not offenders, "rtcf/ imports a component package:\n" + "\n".join(offenders)


def test_the_framework_names_no_components_interface():
    """Nor does rtcf/ hard-code a component's IDL: no string in rtcf/ names a module of the
    project's own IDL (idl/*.idl: RTController, NAO, OpenHRP, ...) or one of its service
    types; the web view and the tools reach components' services through plug-ins."""
    import re
    modules = set()
    types = set()
    for idl in sorted((ROOT / "idl").glob("*.idl")):
        text = idl.read_text()
        modules |= set(re.findall(r"^\s*module\s+(\w+)", text, re.M))
        types |= set(re.findall(r"^\s*interface\s+(\w+Service)\b", text, re.M))
    offenders = []
    for p in _py_files(ROOT / "rtcf"):
        tree = ast.parse(p.read_text(), str(p))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                  ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr)}      # prose may name them
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docs:
                hit = sorted(set(re.findall(r"\w+", node.value)) & (modules | types))
                if hit:
                    offenders.append(f"{p.relative_to(ROOT)}:{node.lineno}: {hit}")
    assert not offenders, "rtcf/ names a component's interface:\n" + "\n".join(offenders)


def package_graph() -> dict[str, dict[str, list[str]]]:
    """package -> {package it imports: [where]} over components/."""
    graph: dict[str, dict[str, list[str]]] = {p: {} for p in bundled()}
    for p in _py_files(COMPONENTS):
        src = package_of(module_name(p))
        if src is None:
            continue
        for line, name in imports_of(p):
            dst = package_of(name)
            if dst is not None and dst != src and dst in graph:
                graph[src].setdefault(dst, []).append(f"{p.relative_to(ROOT)}:{line}")
    return graph


def test_no_circle_between_component_packages():
    graph = package_graph()
    circles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in graph[node]:
            if nxt in path:
                circles.append(path[path.index(nxt):] + [nxt])
            elif len(path) < len(graph):
                visit(nxt, path + [nxt])

    for start in graph:
        visit(start, [start])
    detail = "\n".join(" -> ".join(c) + "  (" + "; ".join(
        graph[a][b][0] for a, b in zip(c, c[1:])) + ")" for c in circles)
    assert not circles, "import circles between component packages:\n" + detail


def test_no_component_package_imports_a_tool_package():
    graph = package_graph()
    bad = [f"{src} -> {dst} ({', '.join(where)})" for src, deps in graph.items()
           if src not in TOOLS for dst, where in deps.items() if dst in TOOLS]
    assert not bad, "component packages importing tool packages:\n" + "\n".join(bad)


def test_each_component_core_imports_neither_rtcf_nor_omniorb():
    """Transitively: a core module imports only the standard library, third-party packages
    (numpy, yaml, mujoco) and core modules of component packages."""
    mods = all_modules()
    cores = {m for pkg in bundled() if pkg not in TOOLS for m in core_modules(pkg)}
    bad = []
    for pkg in bundled():
        if pkg in TOOLS:
            continue
        for mod in core_modules(pkg):
            for line, name in imports_of(mods[mod]):
                top = name.split(".")[0]
                where = f"{mods[mod].relative_to(ROOT)}:{line}: {name}"
                if top in MIDDLEWARE:
                    bad.append(where)
                elif top == PACKAGE and name in mods and name not in cores:
                    bad.append(f"{where} (not a core module)")
    assert not bad, ("core modules importing the middleware (make them pure, or name them "
                     "in SHELL_SIDE with the reason):\n" + "\n".join(bad))


def test_shell_side_lists_only_modules_that_need_the_middleware():
    """SHELL_SIDE stays true: each module it names exists and imports rtcf or omniORB (one
    that does not belongs to the core). Prints the rooms for the record (pytest -s)."""
    mods = all_modules()
    cores = {m for pkg in bundled() if pkg not in TOOLS for m in core_modules(pkg)}
    wrong = []
    for pkg, names in SHELL_SIDE.items():
        for name in names:
            mod = f"{PACKAGE}.{pkg}" + ("" if name == "__init__" else f".{name}")
            if mod not in mods:
                wrong.append(f"{mod}: no such module")
            elif not any(n.split(".")[0] in MIDDLEWARE or
                         (n in mods and n.startswith(f"{PACKAGE}.{pkg}.") and n not in cores)
                         for _, n in imports_of(mods[mod])):
                wrong.append(f"{mod}: imports no middleware (nor the shell), so it is core")
    graph = package_graph()
    for pkg in bundled():
        kind = "tool" if pkg in TOOLS else "component"
        print(f"{pkg} ({kind}) imports: {', '.join(sorted(graph[pkg])) or '-'}")
        if pkg not in TOOLS:
            core = [m.rpartition(".")[2] if m.count(".") > 1 else "__init__"
                    for m in core_modules(pkg)]
            print(f"    core: {', '.join(core)}")
    assert not wrong, "\n".join(wrong)
