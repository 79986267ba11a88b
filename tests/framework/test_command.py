"""rtcf.command: the rtcf command (scripts/run) read as a user types it. No ORB."""

from __future__ import annotations

from pathlib import Path


def _demo(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "c.yaml").write_text(
        "components:\n  - {type: Gain, module: examples, name: g}\n"
        "execution_contexts:\n  - {name: e, kind: stepped, rate: 100, members: [g]}\n")
    (folder / "r.conf").write_text("logger.log_level: WARN\n")


def test_user_paths_are_read_against_the_callers_directory(tmp_path, monkeypatch):
    """scripts/run changes into the repository and passes the user's directory as RTCF_CWD:
    the composition, -f and -o rtcf.composition are read against it (defect 9)."""
    from rtcf.command import main
    from rtcf.paths import user_path
    _demo(tmp_path / "mine")
    elsewhere = tmp_path / "repo"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("RTCF_CWD", str(tmp_path / "mine"))
    assert user_path("c.yaml") == tmp_path / "mine" / "c.yaml"
    assert user_path("../x/c.yaml") == tmp_path / "x" / "c.yaml"
    assert user_path("/abs/c.yaml") == Path("/abs/c.yaml")
    load = f"manager.modules.load_path:{Path(__file__).resolve().parents[2] / 'components'}"
    common = ["--no-corba", "--duration", "0", "--quiet", "-o", load]
    assert main(["c.yaml", "-f", "r.conf", *common]) == 0
    assert main(["-f", "r.conf", "-o", "rtcf.composition:c.yaml", *common]) == 0
    monkeypatch.delenv("RTCF_CWD")
    assert main(["c.yaml", *common]) == 2          # not in the process's own directory


def test_main_refuses_an_empty_composition(tmp_path, monkeypatch, capsys):
    from rtcf.command import main
    (tmp_path / "e.yaml").write_text("# nothing\n")
    monkeypatch.chdir(tmp_path)
    assert main(["e.yaml", "--no-corba", "--duration", "0"]) == 2
    assert "e.yaml: components: no components declared: nothing to run" in \
        capsys.readouterr().err
