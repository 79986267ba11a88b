"""rtcf.corba.idl: the stub build and the generated package."""

import subprocess
import sys
from pathlib import Path

import pytest

from rtcf.corba import idl

REPO = Path(__file__).resolve().parents[2]


def test_stub_modules_import_as_a_normal_package():
    rtc = idl.stub_module("RTC")
    openrtm = idl.stub_module("OpenRTM")
    sdo = idl.stub_module("SDOPackage")
    assert rtc.__name__ == "rtcf._gen.RTC"
    assert idl.stub_module("RTC__POA").__name__ == "rtcf._gen.RTC__POA"
    assert idl.stub_module("OpenRTM__POA").InPortCdr is not None
    # cross-module references: OpenRTM -> RTC -> SDOPackage
    assert issubclass(openrtm.DataFlowComponent, rtc.RTObject)
    assert issubclass(rtc.RTObject, sdo.SDO)
    assert openrtm.DataFlowComponent._NP_RepositoryId == \
        "IDL:openrtm.aist.go.jp/OpenRTM/DataFlowComponent:1.0"
    assert rtc.RTObject._NP_RepositoryId == "IDL:omg.org/RTC/RTObject:1.0"
    assert sdo.Configuration._NP_RepositoryId == "IDL:org.omg/SDOPackage/Configuration:1.0"
    assert openrtm.InPortCdr._NP_RepositoryId == "IDL:OpenRTM/InPortCdr:1.0"
    assert rtc.TimedDoubleSeq._NP_RepositoryId == "IDL:RTC/TimedDoubleSeq:1.0"
    assert idl.stub_module("RTM").Manager is not None  # Manager.idl


def test_nothing_added_to_sys_path():
    gen = str(idl.GEN_DIR)
    assert not any(p.rstrip("/") == gen for p in sys.path)
    assert idl.GEN_DIR == Path(idl.__file__).resolve().parents[1] / "_gen"
    # pip's editable install adds the project root through its own __editable__ .pth; what
    # must never happen is a .pth putting the generated stub folders on sys.path
    # (OpenRTM-aist-Python's trick)
    for pth in Path(sys.prefix).glob("lib/python*/site-packages/*.pth"):
        assert "_gen" not in pth.read_text(errors="replace"), pth


def _gen_state() -> tuple:
    """What a rebuild changes: the generated folder (a rebuild renames a new one into place)
    and its stamp file."""
    stamp = idl.GEN_DIR / idl.STAMP_NAME
    return idl.GEN_DIR.stat().st_ino, stamp.stat().st_mtime_ns, stamp.read_text()


def test_up_to_date_check_compiles_nothing(monkeypatch):
    """Current stubs: build() hashes the inputs, compares the stamp and stops there (no
    omniidl, no lock, nothing rewritten): what makes the check at every start cheap."""
    idl.build()
    before = _gen_state()

    def refuse(*a, **k):
        raise AssertionError("the up-to-date check must not compile or lock")
    monkeypatch.setattr(idl, "_run_omniidl", refuse)
    monkeypatch.setattr(idl, "_lock_path", refuse)
    assert idl.build() is False
    assert _gen_state() == before


def test_cli_in_a_fresh_process_compiles_nothing():
    idl.build()
    before = _gen_state()
    proc = subprocess.run([sys.executable, "-m", "rtcf.corba.idl", "--quiet"], cwd=REPO,
                          capture_output=True, text=True, env={"PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert _gen_state() == before                  # current stubs left as they were


def test_standard_idl_comes_from_rtctree():
    std = idl.standard_idl_dir()
    assert std.parts[-3:] == ("rtctree", "data", "idl")
    names = {f.name for f in idl.input_files()}
    assert {"RTC.idl", "SDOPackage.idl", "OpenRTM.idl", "DataPort.idl", "BasicDataType.idl",
            "ExtendedDataTypes.idl", "InterfaceDataTypes.idl", "Manager.idl"} <= names


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Point the build at a private rtcf folder and project idl folder."""
    rtcf_dir = tmp_path / "rtcf"
    rtcf_dir.mkdir()
    project = tmp_path / "idl"
    project.mkdir()
    monkeypatch.setattr(idl, "_RTCF_DIR", rtcf_dir)
    monkeypatch.setattr(idl, "GEN_DIR", rtcf_dir / "_gen")
    monkeypatch.setattr(idl, "PROJECT_IDL_DIR", project)
    return rtcf_dir, project


@pytest.mark.slow
def test_build_stamp_and_rebuild_on_change(sandbox):
    rtcf_dir, project = sandbox
    (rtcf_dir / ".gen-build-stale").mkdir()  # left by an interrupted build
    assert idl.build() is True
    gen = rtcf_dir / "_gen"
    assert (gen / "RTC" / "__init__.py").is_file()
    assert (gen / idl.STAMP_NAME).read_text().strip() == idl.input_hash()
    assert not list(rtcf_dir.glob(".gen-build-*"))
    assert not (rtcf_dir / "__init__.py").exists()  # omniidl's rtcf/__init__.py not copied
    assert idl.build() is False
    (project / "DemoService.idl").write_text(
        '#include "BasicDataType.idl"\n'
        "module Demo { interface DemoService { RTC::TimedDouble echo(in RTC::TimedDouble v);"
        " }; };\n")
    assert idl.build() is True
    text = (gen / "DemoService_idl.py").read_text()
    assert "rtcf._gen.BasicDataType_idl" in text
    assert (gen / "Demo" / "__init__.py").is_file()


@pytest.mark.slow
def test_broken_idl_reports_and_keeps_the_old_package(sandbox, capsys):
    rtcf_dir, project = sandbox
    assert idl.build() is True
    before = (rtcf_dir / "_gen" / idl.STAMP_NAME).read_text()
    (project / "Bad.idl").write_text("module Bad { interface X { void f(in nosuchtype a); }; };\n")
    with pytest.raises(idl.IdlBuildError, match="omniidl failed"):
        idl.build()
    assert (rtcf_dir / "_gen" / idl.STAMP_NAME).read_text() == before
    assert not list(rtcf_dir.glob(".gen-build-*"))
    assert idl.main(["--quiet"]) == 1
    assert "omniidl failed" in capsys.readouterr().err
