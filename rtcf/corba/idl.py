"""Build the omniORBpy stubs for the standard RTC/OpenRTM IDL and this project's IDL.

The standard IDL is read from the installed rtctree-aist package (``rtctree/data/idl``), the
framework's own IDL (the lockstep wire) from ``rtcf/idl/``, the components' IDL from the
repository's ``idl/`` folder. Both are compiled with
``omniidl -bpython -Wbpackage=rtcf._gen`` into the package folder ``rtcf/_gen`` (gitignored),
so ``import rtcf._gen.RTC`` is an ordinary package import: nothing goes on sys.path.

A stamp file in ``rtcf/_gen`` records a hash of every input IDL file and of the omniidl Python
back end; when it matches, the build is skipped (a few milliseconds). The build runs in a
temporary folder next to ``rtcf/_gen`` under an inter-process lock and is swapped into place
at the end, so an interrupted or concurrent build never leaves a half-written package.

Command line: ``python -m rtcf.corba.idl [--quiet] [--force]`` or ``rtcf-idl``.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib
import importlib.resources
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

from ..errors import IdlBuildError

PACKAGE = "rtcf._gen"
STAMP_NAME = ".rtcf-idl-stamp"
_RTCF_DIR = Path(__file__).resolve().parent.parent
GEN_DIR = _RTCF_DIR / "_gen"
FRAMEWORK_IDL_DIR = _RTCF_DIR / "idl"
PROJECT_IDL_DIR = _RTCF_DIR.parent / "idl"

_lock = threading.Lock()
_ready = False


def standard_idl_dir() -> Path:
    """The folder of the standard RTC/OpenRTM IDL shipped inside rtctree-aist."""
    try:
        root = importlib.resources.files("rtctree")
    except ModuleNotFoundError:
        raise IdlBuildError("rtctree-aist is not installed: it ships the standard RTC IDL "
                            "(rtctree/data/idl)") from None
    path = Path(str(root)) / "data" / "idl"
    if not (path / "RTC.idl").is_file():
        raise IdlBuildError(f"no RTC.idl in {path}: unexpected rtctree-aist layout")
    return path


def input_files() -> list[Path]:
    """Every IDL file compiled: the standard ones, the framework's, then the components'
    (each sorted by name)."""
    files = sorted(standard_idl_dir().glob("*.idl"))
    if FRAMEWORK_IDL_DIR.is_dir():
        files += sorted(FRAMEWORK_IDL_DIR.glob("*.idl"))
    if PROJECT_IDL_DIR.is_dir():
        files += sorted(PROJECT_IDL_DIR.glob("*.idl"))
    return files


def _backend_file() -> Path | None:
    """The omniidl Python back end source, found without importing it."""
    spec = importlib.util.find_spec("omniidl_be")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "python.py"
    return path if path.is_file() else None


def input_hash(files: list[Path] | None = None) -> str:
    """sha256 over the IDL files (name and content) and the omniidl back end source."""
    h = hashlib.sha256()
    for f in files if files is not None else input_files():
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    backend = _backend_file()
    h.update(backend.read_bytes() if backend else b"no-backend")
    return h.hexdigest()


def _stamp_ok(digest: str) -> bool:
    try:
        return (GEN_DIR / STAMP_NAME).read_text().strip() == digest
    except OSError:
        return False


def _omniidl_command() -> list[str]:
    """omniidl next to the running interpreter (jeteve-omniorb installs a Python script there
    with the omnicpp preprocessor beside it), else on PATH, else its main() in a subprocess."""
    local = Path(sys.executable).parent / "omniidl"
    if local.is_file():
        return [str(local)]
    found = shutil.which("omniidl")
    if found:
        return [found]
    if importlib.util.find_spec("omniidl") is None:
        raise IdlBuildError("omniidl not found: install jeteve-omniorb (omniORBpy + omniidl)")
    cmd = [sys.executable, "-c", "import sys; from omniidl.main import main; sys.exit(main())"]
    spec = importlib.util.find_spec("jeteve_omniorb")
    if spec and spec.submodule_search_locations:
        cpp = Path(list(spec.submodule_search_locations)[0]) / "bin" / "omnicpp"
        if cpp.is_file():
            cmd.append(f"-Y{cpp}")
    return cmd


def _run_omniidl(files: list[Path], outdir: Path) -> None:
    std = standard_idl_dir()
    cmd = _omniidl_command() + ["-bpython", f"-Wbpackage={PACKAGE}", f"-C{outdir}",
                                f"-I{std}"]
    for extra in (FRAMEWORK_IDL_DIR, PROJECT_IDL_DIR):
        if extra.is_dir():
            cmd.append(f"-I{extra}")
    cmd += [str(f) for f in files]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise IdlBuildError(f"omniidl failed (exit {proc.returncode}):\n"
                            f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")


def _lock_path() -> Path:
    tag = hashlib.sha256(str(GEN_DIR).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"rtcf-idl-{os.getuid()}-{tag}.lock"


def build(force: bool = False, quiet: bool = True) -> bool:
    """Compile the stubs into rtcf/_gen unless the stamp is current. True when it built."""
    files = input_files()
    digest = input_hash(files)
    if not force and _stamp_ok(digest):
        return False
    with open(_lock_path(), "w") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)  # another process may be building the same tree
        if not force and _stamp_ok(digest):
            return False
        for stale in _RTCF_DIR.glob(".gen-build-*"):  # left by an interrupted build
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=".gen-build-", dir=_RTCF_DIR))
        try:
            _run_omniidl(files, tmp)
            new = tmp / "rtcf" / "_gen"
            if not (new / "RTC" / "__init__.py").is_file():
                raise IdlBuildError(f"omniidl produced no {PACKAGE}.RTC package in {tmp}")
            (new / "__init__.py").write_text(
                '"""omniORBpy stubs generated by rtcf.corba.idl: do not edit."""\n')
            (new / STAMP_NAME).write_text(digest + "\n")
            old = tmp / "old"
            if GEN_DIR.exists():
                os.rename(GEN_DIR, old)
            os.rename(new, GEN_DIR)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    importlib.invalidate_caches()
    if not quiet:
        print(f"rtcf-idl: compiled {len(files)} IDL files into {GEN_DIR}")
    return True


def ensure_stubs() -> None:
    """Make sure rtcf._gen is built and current; cheap after the first call in a process."""
    global _ready
    if _ready:
        return
    with _lock:
        if not _ready:
            build()
            _ready = True


def stub_module(name: str) -> ModuleType:
    """The generated module ``rtcf._gen.<name>``, e.g. ``stub_module("RTC")`` or
    ``stub_module("OpenRTM__POA")``, building the stubs first if needed."""
    ensure_stubs()
    return importlib.import_module(f"{PACKAGE}.{name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rtcf-idl", description=__doc__.split("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    args = parser.parse_args(argv)
    try:
        built = build(force=args.force, quiet=args.quiet)
    except IdlBuildError as exc:
        print(f"rtcf-idl: {exc}", file=sys.stderr)
        return 1
    if not built and not args.quiet:
        print(f"rtcf-idl: {GEN_DIR} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
