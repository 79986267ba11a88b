"""rtcf.validate: one set of boolean words for every reader of a YES / NO value."""

from __future__ import annotations

import pytest

from rtcf import rtcconf
from rtcf.errors import ConfigError, ParamError
from rtcf.params import Param
from rtcf.ports import InPort, OutPort, connect
from rtcf.datatypes import TimedDouble
from rtcf.validate import parse_yes_no

TRUE = ["YES", "yes", "True", "ON", "on", "1", " yes "]
FALSE = ["NO", "no", "False", "OFF", "0", "\tno\n"]
NEITHER = ["", "y", "n", "2", "enable", "YES!", None, 1, True]


@pytest.mark.parametrize("text", TRUE)
def test_true_words(text):
    assert parse_yes_no(text) is True


@pytest.mark.parametrize("text", FALSE)
def test_false_words(text):
    assert parse_yes_no(text) is False


@pytest.mark.parametrize("text", NEITHER)
def test_anything_else_is_neither(text):
    assert parse_yes_no(text) is None


@pytest.mark.parametrize("text,value", [(t, True) for t in TRUE] + [(f, False) for f in FALSE])
def test_rtc_conf_and_parameters_read_the_same_words(text, value):
    conf = rtcconf.Conf({"a.flag": text})
    assert rtcconf.get_bool(conf, "a.flag") is value
    assert Param(bool, False).coerce(text) is value


@pytest.mark.parametrize("text", ["y", "enable", "2"])
def test_rtc_conf_and_parameters_refuse_the_same_words(text):
    with pytest.raises(ConfigError, match="expected YES or NO"):
        rtcconf.get_bool(rtcconf.Conf({"a.flag": text}), "a.flag")
    with pytest.raises((ParamError, ValueError)):
        Param(bool, False).coerce(text)


def test_a_duplicate_connection_is_allowed_by_any_true_word():
    out, inp = OutPort("o", TimedDouble), InPort("i", TimedDouble)
    connect(out, inp)
    for word in ("ON", "true", "1"):
        connect(out, inp, {"allow_dup_connection": word})
    assert len(out.connectors) == 4


def test_limits_take_numpy_scalars_and_refuse_bools_and_nan():
    import numpy as np
    from rtcf.validate import check_factor, check_rate
    assert check_rate(np.float32(100)) is None and check_rate(np.int64(100)) is None
    assert check_rate(True) == "expected a number [Hz]"
    assert "between 1 and 10000" in check_rate(float("nan"))
    assert check_factor(np.float64(0)) is None and check_factor(-1) is not None


def test_the_configuration_readers_import_no_runtime_module():
    """composition.py and confcheck.py check values with rtcf.validate (and the pure
    overrun policy), not by importing the EC, simulation time or port modules."""
    import ast
    from pathlib import Path

    import rtcf
    root = Path(rtcf.__file__).parent
    allowed = {"errors", "rtcconf", "validate", "yamlio", "overrun"}
    for name in ("composition", "confcheck", "rtcconf", "yamlio", "validate"):
        tree = ast.parse((root / f"{name}.py").read_text())
        used = set()
        for node in tree.body:        # module level: what importing it imports
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level == 1 or mod.startswith("rtcf"):
                    used.add(mod.removeprefix("rtcf.").removeprefix("rtcf") or
                             node.names[0].name)
        assert used <= allowed, (name, used - allowed)


def test_same_value_compares_struct_members_as_they_come_off_the_wire():
    from rtcf.validate import same_value
    assert same_value((0.1, [1.0, 2.0]), [0.1, [1.0, 2.0]])      # tuples and lists alike
    assert same_value(0.30000000000000004, 0.3)                  # a double's last bits
    assert same_value(1e-12, 0.0)                                # 1e-9 absolute near zero
    assert not same_value(0.3001, 0.3)
    assert not same_value([1.0, 2.0], [1.0, 2.0, 3.0])           # a missing element
    assert not same_value([1.0, 2.5], [1.0, 2.0])
    assert same_value(3, 3.0) and same_value("CP", "CP") and not same_value("CP", "NO")
    assert same_value(True, True) and not same_value(True, False)
