"""rtcf.loader: component modules by name, bundled (rtcf_components) or from the load path,
and the types they define. No ORB."""

from __future__ import annotations

import pytest

from rtcf import Component, rtcconf
from rtcf.loader import BUNDLED_COMPONENTS, ModuleLoader


class Src(Component):
    pass


class Sink(Component):
    pass


def loader(**conf) -> ModuleLoader:
    c = rtcconf.merge_conf(rtcconf.defaults(), {k.replace("__", "."): v
                                                for k, v in conf.items()})
    ld = ModuleLoader(c)
    ld.register(Src)
    ld.register(Sink)
    return ld


def test_load_module_from_the_load_path(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "component.py").write_text(
        "from rtcf import Component\nclass Hello(Component):\n    pass\n")
    m = loader(manager__modules__load_path=str(tmp_path))
    assert m.resolve("Hello", "mypkg").type_name == "Hello"
    with pytest.raises(LookupError, match="defines no component type 'Nope'"):
        m.resolve("Nope", "mypkg")


def test_unknown_type_is_named_with_the_known_ones(tmp_path):
    m = loader()
    with pytest.raises(LookupError, match=r"no module named, and the loaded ones define Sink, "
                                          r"Src; did you mean 'Src'\?"):
        m.resolve("Srx")
    with pytest.raises(LookupError, match=r"'\.\./etc' is not an importable module name"):
        m.load_module("../etc")


def test_a_load_path_given_with_o_is_read_against_rtcf_cwd_and_leaves_out_the_bundled(
        tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    monkeypatch.setenv("RTCF_CWD", str(tmp_path))
    conf = rtcconf.apply_overrides(
        rtcconf.defaults(), [f"manager.modules.load_path:./mine,{BUNDLED_COMPONENTS}"])
    assert ModuleLoader(conf).load_path() == [tmp_path / "mine"]


def test_bundled_components_load_by_short_and_namespaced_name(tmp_path):
    m = loader(manager__modules__load_path=str(tmp_path))
    short = m.load_module("examples")
    assert short.__name__ == "rtcf_components.examples.component"
    assert m.load_module("rtcf_components.examples") is short
    body = m.load_module("dcm.mujoco_body")
    assert body.__name__ == "rtcf_components.dcm.mujoco_body"


def test_a_user_module_named_like_a_bundled_one_is_refused_naming_both(tmp_path):
    (tmp_path / "examples.py").write_text("raise SystemExit('must not be imported')\n")
    m = loader(manager__modules__load_path=str(tmp_path))
    with pytest.raises(LookupError) as e:
        m.load_module("examples")
    text = str(e.value)
    assert "rtcf_components.examples" in text and str(tmp_path / "examples.py") in text
    assert m.load_module("rtcf_components.examples").__name__.startswith("rtcf_components.")


def test_a_user_module_with_another_name_loads_from_the_load_path(tmp_path):
    (tmp_path / "mycomps.py").write_text(
        "from rtcf import Component\n"
        "class Mine(Component):\n"
        "    pass\n")
    m = loader(manager__modules__load_path=str(tmp_path))
    assert m.load_module("mycomps").Mine.type_name == "Mine"


def test_a_module_fault_is_a_module_error_and_an_unknown_type_is_not(tmp_path):
    """The composition check reports a ModuleError at .module and any other LookupError at
    .type (rtcf.composition.check_params)."""
    from rtcf.errors import ModuleError
    (tmp_path / "broken.py").write_text("raise RuntimeError('no')\n")
    m = loader(manager__modules__load_path=str(tmp_path))
    for name in ("broken", "nosuchmodule", "a/b"):
        with pytest.raises(ModuleError):
            m.load_module(name)
    with pytest.raises(LookupError) as info:
        m.resolve("Nope")
    assert not isinstance(info.value, ModuleError)
