"""The broken-input catalogue: ``scripts/run`` run as a user would, on every kind of bad input.

Each case writes its files into a fresh folder and runs ``scripts/run`` *from that folder*
with relative paths (so every case also checks that the user's paths are read against the
directory the command was typed in, issue 11 defect 9). A refused input must:

* exit non-zero, with a message naming the place (file and path inside it, ``file:line``,
  or ``-o``) and the bad value, and no Python traceback;
* start nothing: no omniNames (the run is pointed at the private naming service *and* at a
  free loopback port, where it would start one if it got that far), no process left in its
  process group, and no naming entry touched: canary bindings under the names the broken
  compositions use still point where they did, and the host context lists the same names.

Warnings (unknown rtc.conf / -o keys, a line without a separator) do not refuse: those runs
exit 0 and name the file and line (or -o) and the key. The run-time path (``rtconf set`` over
CORBA, the SDO Configuration interface) is checked against a live system at the end.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow    # each test runs a command: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "scripts" / "run"
HOST = socket.gethostname()
CANARIES = ("g", "gen", "Gain0")      # instance names the broken compositions would bind

GAIN = "components:\n  - {type: Gain, module: examples, name: g}\n"
BINARY = bytes(range(256)) * 4        # has NUL bytes and invalid UTF-8
FIFO = object()                       # in a case's files: make a FIFO (no writer) there


SIM = "components:\n  - {type: Simulator, module: simulator, name: Sim, params: {}}\n"


def ec(rate: str) -> str:
    return GAIN + f"execution_contexts:\n  - {{name: main, rate: {rate}, members: [g]}}\n"


# id -> (files {name: text or bytes}, arguments after scripts/run, regexes the output must hold)
REFUSED: dict[str, tuple[dict[str, str | bytes], list[str], list[str]]] = {
    # files that are not text
    "binary composition": ({"c.yaml": BINARY}, ["c.yaml"],
                           [r"c\.yaml: not a text file: NUL byte at line 1, offset 0"]),
    "non-UTF-8 composition": ({"c.yaml": b"components:\n  - {type: G\xe4in}\n"}, ["c.yaml"],
                              [r"c\.yaml: not a UTF-8 text file: byte 0xe4 at line 2, offset 24"]),
    "binary rtc.conf (-f)": ({"c.yaml": GAIN, "b.conf": BINARY}, ["-f", "b.conf", "c.yaml"],
                             [r"b\.conf: not a text file: NUL byte"]),
    "non-UTF-8 rtc.conf (-f)": ({"c.yaml": GAIN, "b.conf": b"logger.enable: \xff\n"},
                                ["-f", "b.conf", "c.yaml"],
                                [r"b\.conf: not a UTF-8 text file: byte 0xff at line 1, offset 15"]),
    "binary composition named by -o rtcf.composition": (
        {"c.yaml": BINARY}, ["-o", "rtcf.composition:c.yaml"], [r"c\.yaml: not a text file"]),
    "missing composition": ({}, ["nosuch.yaml"],
                            [r"nosuch\.yaml: cannot read composition: No such file"]),
    "composition is a folder": ({"d/c.yaml": GAIN}, ["d"],
                                [r"d: cannot read composition: Is a directory"]),
    "-f is a folder": ({"c.yaml": GAIN, "d/r.conf": ""}, ["-f", "d", "c.yaml"],
                       [r"d: cannot read configuration file: Is a directory"]),
    "missing -f file": ({"c.yaml": GAIN}, ["-f", "nosuch.conf", "c.yaml"],
                        [r"nosuch\.conf: cannot read configuration file: No such file"]),
    # module names
    "module ../../etc": ({"c.yaml": 'components:\n  - {type: Gain, module: "../../etc"}\n'},
                         ["c.yaml"], [r"c\.yaml: components\[0\]\.module: expected an "
                                      r"importable module name .*got '\.\./\.\./etc'"]),
    "module with a slash": ({"c.yaml": "components:\n  - {type: Gain, module: a/b}\n"},
                            ["c.yaml"], [r"components\[0\]\.module: .*got 'a/b'"]),
    "module empty": ({"c.yaml": 'components:\n  - {type: Gain, module: ""}\n'}, ["c.yaml"],
                     [r"components\[0\]\.module: expected a non-empty string, got ''"]),
    "module in precreate": (
        {}, ["-o", "rtcf.composition:", "-o",
             "manager.components.precreate:Gain?module=../etc"],
        [r"-o: manager\.components\.precreate\[0\]\.module: .*got '\.\./etc'"]),
    "module not found": ({"c.yaml": "components:\n  - {type: Gain, module: nosuchmod}\n"},
                         ["c.yaml"], [r"components\[0\]\.module: cannot import module "
                                      r"'nosuchmod'"]),
    # unknown component types: the type itself is the fault
    "unknown type in a module": (
        {"c.yaml": "components:\n  - {type: Gian, module: examples}\n"}, ["c.yaml"],
        [r"components\[0\]\.type: unknown component type .*did you mean 'Gain'.*got 'Gian'"]),
    "unknown type without module": (
        {"c.yaml": "components:\n  - {type: Gian}\n"}, ["c.yaml"],
        [r"c\.yaml: components\[0\]\.type: unknown component type .*got 'Gian'"]),
    # nothing to run
    "empty composition file": ({"c.yaml": ""}, ["c.yaml"],
                               [r"c\.yaml: components: no components declared"]),
    "comments only": ({"c.yaml": "# nothing here\n"}, ["c.yaml"],
                      [r"c\.yaml: components: no components declared"]),
    "empty component list": ({"c.yaml": "components: []\n"}, ["c.yaml"],
                             [r"c\.yaml: components: no components declared"]),
    # duplicate keys
    "duplicate key in a component": (
        {"c.yaml": "components:\n  - {type: Gain, module: examples, name: g, name: h}\n"},
        ["c.yaml"], [r"c\.yaml: components\[0\]\.name: duplicate key \(line 2; first given "
                     r"at line 2\), got 'name'"]),
    "duplicate top-level key": (
        {"c.yaml": GAIN + "components:\n  - {type: Recorder, module: examples}\n"},
        ["c.yaml"], [r"c\.yaml: components: duplicate key \(line 3; first given at line 1\)"]),
    "duplicate parameter": (
        {"c.yaml": "components:\n  - type: Gain\n    module: examples\n    params:\n"
                   "      gain: 1.0\n      gain: 2.0\n"},
        ["c.yaml"], [r"components\[0\]\.params\.gain: duplicate key \(line 6; first given "
                     r"at line 5\)"]),
    # non-finite parameter values
    "NaN parameter": ({"c.yaml": "components:\n  - {type: Gain, module: examples, name: g, "
                                 "params: {gain: .nan}}\n"}, ["c.yaml"],
                      [r"c\.yaml: components\[0\]\.params\.gain: expected a finite number, "
                       r"got nan"]),
    "inf parameter": ({"c.yaml": "components:\n  - {type: Gain, module: examples, name: g, "
                                 "params: {gain: -.inf}}\n"}, ["c.yaml"],
                      [r"components\[0\]\.params\.gain: expected a finite number, got -inf"]),
    "'inf' string parameter": ({"c.yaml": "components:\n  - {type: Gain, module: examples, "
                                          "name: g, params: {gain: 'inf'}}\n"}, ["c.yaml"],
                               [r"params\.gain: expected a finite number, got 'inf'"]),
    "1e400 parameter": ({"c.yaml": "components:\n  - {type: Gain, module: examples, name: g, "
                                   "params: {gain: 1e400}}\n"}, ["c.yaml"],
                        [r"params\.gain: expected a finite number, got inf"]),
    "NaN in a precreate conf.default": (
        {}, ["-o", "rtcf.composition:", "-o",
             "manager.components.precreate:Gain?module=examples&conf.default.gain=nan"],
        [r"-o: manager\.components\.precreate\[0\]\.params\.gain: expected a finite number, "
         r"got 'nan'"]),
    "inf in an rtc.conf component key": (
        {"c.yaml": GAIN, "r.conf": "example.g.conf.default.gain: inf\n"},
        ["-f", "r.conf", "c.yaml"],
        [r"r\.conf:1: example\.g\.conf\.default\.gain: g\.gain: expected a finite number, "
         r"got 'inf'"]),
    "huge parameter value is echoed short": (
        {"c.yaml": "components:\n  - {type: Gain, module: examples, name: g, params: {gain: '"
                   + "x" * 100_000 + "'}}\n"}, ["c.yaml"],
        [r"params\.gain: expected float, got 'x{60,80}\.\.\. \(100000 chars\)"]),
    # execution context rates
    **{f"EC rate {r}": ({"c.yaml": ec(r)}, ["c.yaml"],
                        [r"c\.yaml: execution_contexts\[0\]\.rate: expected a rate between "
                         r"1 and 10000 \[Hz\], got " + re.escape(shown)])
       for r, shown in (("1e-9", "1e-09"), ("1e12", "1000000000000.0"), (".inf", "inf"),
                        (".nan", "nan"), ("0", "0"), ("-5", "-5"), ("0.5", "0.5"))},
    "EC rate not a number": ({"c.yaml": ec("fast")}, ["c.yaml"],
                             [r"execution_contexts\[0\]\.rate: expected a number \[Hz\], "
                              r"got 'fast'"]),
    "EC rate quoted '1e3'": ({"c.yaml": ec("'1e3'")}, ["c.yaml"],
                             [r"execution_contexts\[0\]\.rate: expected a number \[Hz\], "
                              r"got '1e3'"]),
    "-o exec_cxt.periodic.rate:-5": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "exec_cxt.periodic.rate:-5"],
        [r"-o: exec_cxt\.periodic\.rate: expected a rate between 1 and 10000 \[Hz\], "
         r"got '-5'"]),
    "-o exec_cxt.periodic.rate:nan": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "exec_cxt.periodic.rate:nan"],
        [r"-o: exec_cxt\.periodic\.rate: .*got 'nan'"]),
    "rtc.conf rate 1e12": ({"c.yaml": GAIN, "r.conf": "\nexec_cxt.periodic.rate: 1e12\n"},
                           ["-f", "r.conf", "c.yaml"],
                           [r"r\.conf:2: exec_cxt\.periodic\.rate: .*got '1e12'"]),
    # other typed rtc.conf keys and -o syntax
    "-o spin_us negative": ({"c.yaml": GAIN}, ["c.yaml", "-o", "exec_cxt.periodic.spin_us:-1"],
                            [r"-o: exec_cxt\.periodic\.spin_us: expected a number >= 0, "
                             r"got '-1'"]),
    "-o boolean not YES/NO": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "exec_cxt.periodic.sched_fifo:maybe"],
        [r"-o: exec_cxt\.periodic\.sched_fifo: expected YES or NO, got 'maybe'"]),
    "-o without a colon": ({"c.yaml": GAIN}, ["c.yaml", "-o", "logger.enable"],
                           [r"-o: expected \"key:value\", got 'logger\.enable'"]),
    "invalid YAML": ({"c.yaml": "components: [\n"}, ["c.yaml"],
                     [r"c\.yaml: line \d+: invalid YAML"]),
    # command-line options
    "--duration nan": ({"c.yaml": GAIN}, ["c.yaml", "--duration", "nan"],
                       [r"argument --duration: expected a number of seconds >= 0, got 'nan'"]),
    "--duration negative": ({"c.yaml": GAIN}, ["c.yaml", "--duration", "-1"],
                            [r"argument --duration: .*got '-1'"]),
    "--process unknown": ({"c.yaml": GAIN}, ["c.yaml", "--process", "nosuch"],
                          [r"--process: no process 'nosuch' in .*c\.yaml \(its processes: "
                           r"main\)"]),
    # issue 18 item 8: a component module whose import fails, one line each
    **{f"module that {what} at import": (
        {"mods/bad.py": code, "c.yaml": "components:\n  - {type: X, module: bad, name: g}\n"},
        ["-o", "manager.modules.load_path:mods", "c.yaml"],
        [r"^rtcf: \S*c\.yaml: components\[0\]\.module: importing module 'bad' failed "
         r"\(\S*mods/bad\.py:\d+\): " + shown + r"\n"])
       for what, code, shown in (
           ("raises", "x = 1\nraise RuntimeError('no robot here')\n",
            r"RuntimeError: no robot here"),
           ("has a SyntaxError", "def f(:\n    pass\n", r"SyntaxError: invalid syntax"),
           ("calls sys.exit(3)", "import sys\nsys.exit(3)\n",
            r"it called sys\.exit\(3\) while being imported"),
           ("imports a missing module", "import nosuch_dependency_xyz\n",
            r"ModuleNotFoundError: No module named 'nosuch_dependency_xyz'"))},
    "package whose component module raises": (
        {"mods/pkg/__init__.py": "", "mods/pkg/component.py": "raise ValueError('bad')\n",
         "c.yaml": "components:\n  - {type: X, module: pkg, name: g}\n"},
        ["-o", "manager.modules.load_path:mods", "c.yaml"],
        [r"components\[0\]\.module: importing module 'pkg\.component' failed "
         r"\(\S*mods/pkg/component\.py:1\): ValueError: bad"]),
    # issue 18 item 9: names the naming service cannot carry, or that split a line
    "instance name outside Latin-1": (
        {"c.yaml": "components:\n  - {type: Gain, module: examples, name: \"g\u540d\"}\n"},
        ["c.yaml"], [r"c\.yaml: components\[0\]\.name: expected an instance name without "
                     r".*characters outside Latin-1, got 'g\u540d'"]),
    "instance name with a newline": (
        {"c.yaml": "components:\n  - {type: Gain, module: examples, name: \"g\\nx\"}\n"},
        ["c.yaml"], [r"components\[0\]\.name: .*control characters.*got 'g\\nx'"]),
    "instance name with a control character": (
        {"c.yaml": "components:\n  - {type: Gain, module: examples, name: \"g\\x07\"}\n"},
        ["c.yaml"], [r"components\[0\]\.name: .*got 'g\\x07'"]),
    "precreate instance name with a control character": (
        {}, ["-o", "rtcf.composition:", "-o",
             "manager.components.precreate:Gain?module=examples&instance_name=g\x01"],
        [r"-o: manager\.components\.precreate\[0\]\.instance_name: .*control characters"]),
    "naming.formats giving a name outside Latin-1": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "naming.formats:%h.host_cxt/%n\u540d.rtc"],
        [r"c\.yaml: components\[0\]\.name: naming\.formats .* gives the name "
         r"'[^']*g\u540d\.rtc' with a character outside Latin-1"]),
    "naming.formats with an unknown conversion": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "naming.formats:%h.host_cxt/%q.rtc"],
        [r"components\[0\]\.name: -o: naming\.formats: .*unknown conversion %q"]),
    "-o naming.formats: (empty)": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "naming.formats:"],
        [r"-o: naming\.formats: expected at least one name format .*naming\.enable: NO"
         r".*got ''"]),
    "a connection listed twice": (
        {"c.yaml": "components:\n  - {type: SineGenerator, module: examples, name: gen}\n"
                   "  - {type: Gain, module: examples, name: g}\n"
                   "connections:\n  - {from: gen.out, to: g.in}\n"
                   "  - {from: g.in, to: gen.out, subscription_type: new}\n"},
        ["c.yaml"], [r"c\.yaml: connections\[1\]: the same connection as connections\[0\] "
                     r".*allow_dup_connection: YES.*got 'g\.in -> gen\.out'"]),
    "empty numeric rtc.conf value": (
        {"c.yaml": GAIN, "r.conf": "# numbers\nexec_cxt.periodic.spin_us:\n"},
        ["-f", "r.conf", "c.yaml"],
        [r"r\.conf:2: exec_cxt\.periodic\.spin_us: expected a number >= 0, got ''"]),
    "empty -o rtcf.connector.check_interval": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "rtcf.connector.check_interval:"],
        [r"-o: rtcf\.connector\.check_interval: expected a number > 0, got ''"]),
    "-o rtcf.connector.suspect_timeout:-1 names -o": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "rtcf.connector.suspect_timeout:-1"],
        [r"^rtcf: -o: rtcf\.connector\.suspect_timeout: expected a number > 0, got '-1'"]),
    "corba.endpoints of another host": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "corba.endpoints:192.0.2.1"],
        [r"-o: corba\.endpoints: '192\.0\.2\.1' is not an address of this host .*got "
         r"'192\.0\.2\.1'"]),
    "corba.endpoints that does not resolve": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "corba.endpoints:no-such-host.invalid"],
        [r"-o: corba\.endpoints: cannot resolve 'no-such-host\.invalid'"]),
    "an ORB endpoint of another host in corba.args": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "corba.args:-ORBendPoint giop:tcp:192.0.2.1:"],
        [r"rtcf: the ORB cannot start: cannot listen on corba\.endpoints"]),
    # issue 18 item 5: a connection's call timeout, checked with the composition
    "connection call_timeout 0": (
        {"c.yaml": "components:\n  - {type: SineGenerator, module: examples, name: gen}\n"
                   "  - {type: Gain, module: examples, name: g, process: two}\n"
                   "connections:\n  - {from: gen.out, to: g.in, call_timeout: 0}\n"},
        ["c.yaml"], [r"c\.yaml: connections\[0\]\.call_timeout: expected a number of "
                     r"seconds between 0\.001 and 60, got 0"]),
    # issue 18 item 10: special files
    "composition is a FIFO with no writer": (
        {"c.fifo": FIFO}, ["c.fifo"],
        [r"c\.fifo: cannot read composition: it is a FIFO, not a regular file"]),
    "-f is a FIFO with no writer": (
        {"c.yaml": GAIN, "r.fifo": FIFO}, ["-f", "r.fifo", "c.yaml"],
        [r"r\.fifo: cannot read configuration file: it is a FIFO, not a regular file"]),
    "-o rtcf.composition names a FIFO": (
        {"c.fifo": FIFO}, ["-o", "rtcf.composition:c.fifo"], [r"c\.fifo: .*it is a FIFO"]),
    "composition is /dev/zero": (
        {}, ["/dev/zero"],
        [r"/dev/zero: cannot read composition: it is a character device, not a regular "
         r"file"]),
    "-f /dev/zero": ({"c.yaml": GAIN}, ["-f", "/dev/zero", "c.yaml"],
                     [r"/dev/zero: cannot read configuration file: it is a character device"]),
    "composition through a symlink to /dev/zero": (
        {"c.yaml": Path("/dev/zero")}, ["c.yaml"], [r"c\.yaml: .*a character device"]),
    "composition larger than the limit": (
        {"c.yaml": "#" * (8 * 1024 * 1024 + 10)}, ["c.yaml"],
        [r"c\.yaml: cannot read composition: larger than the 8 MiB limit"]),
    # what a component checked only at activation or creation (a traceback,
    # the component in ERROR, the run going on and exiting 0) is refused before anything starts
    "Simulator EC rate not a whole multiple of the model's timestep": (
        {"c.yaml": SIM + "execution_contexts:\n  - {name: sim, rate: 300, members: [Sim]}\n"},
        ["c.yaml"],
        [r"c\.yaml: execution_contexts\[0\]\.rate: expected a rate whose period is a whole "
         r"multiple of the timestep of Sim's model nao_v5, 0\.001 s \(it steps the physics one "
         r"EC period per cycle: 1000, 500, 250, 100 Hz, \.\.\.\), got 300"]),
    "Simulator default EC rate (exec_cxt.periodic.rate) not a multiple": (
        {"c.yaml": SIM}, ["c.yaml", "-o", "exec_cxt.periodic.rate:300"],
        [r"c\.yaml: execution_contexts \(the default 'default', its rate from "
         r"exec_cxt\.periodic\.rate\): expected a rate whose period .*got 300"]),
    "Simulator initial_q of the wrong length": (
        {"c.yaml": SIM.replace("{}", "{initial_q: [0.1, 0.2]}")}, ["c.yaml"],
        [r"c\.yaml: components\[0\]\.params\.initial_q: expected 26 joint angles \[rad\] in "
         r"nao_v5's order \(HeadYaw, HeadPitch, LShoulderPitch, \.\.\. RHand\), got 2: "
         r"\[0\.1, 0\.2\]"]),
    "Simulator initial_q beyond a joint's range": (
        {"c.yaml": SIM.replace("{}", "{model: m1013, initial_q: [0, 0, 3.0, 0, 0, 0]}")},
        ["c.yaml"],
        [r"components\[0\]\.params\.initial_q: joint angles beyond the model's limits: "
         r"joint3 = 3 outside \[-2\.79253, 2\.79253\]"]),
    "Simulator model that does not exist": (
        {"c.yaml": SIM.replace("{}", "{model: nosuch.xml}")}, ["c.yaml"],
        [r"components\[0\]\.params\.model: nosuch\.xml: no such model file in \S+ or \S+ "
         r"\(bundled models: nao_v5, m1013\), got 'nosuch\.xml'"]),
    "DCM on MuJoCo at another rate than its cycle": (
        {"c.yaml": "components:\n  - {type: DCM, module: dcm, params: {body: mujoco, "
                   "profile: naoV5}}\nexecution_contexts:\n  - {name: dcm, rate: 100, "
                   "members: [DCM0]}\n"}, ["c.yaml"],
        [r"c\.yaml: execution_contexts\[0\]\.rate: expected 83\.3333 Hz: DCM0's body is the "
         r"MuJoCo physics, which advances one DCM cycle \(12 ms: profile naoV5, period_ms 0\) "
         r"per EC cycle, got 100"]),
    "DCM initial_q of the wrong length": (
        {"c.yaml": "components:\n  - {type: DCM, module: dcm, params: {body: mujoco, "
                   "initial_q: [0.0, 0.1, 0.2]}}\n"}, ["c.yaml"],
        [r"c\.yaml: components\[0\]\.params\.initial_q: expected 26 joint angles \[rad\] in "
         r"body order \(HeadYaw, HeadPitch, LShoulderPitch, \.\.\. RHand\), got 3: "
         r"\[0\.0, 0\.1, 0\.2\]"]),
    "DCM model file that does not exist": (
        {"c.yaml": "components:\n  - {type: DCM, module: dcm, params: {model: nosuch.yaml}}\n"},
        ["c.yaml"],
        [r"components\[0\]\.params\.model: model file 'nosuch\.yaml' not found .*got "
         r"'nosuch\.yaml'"]),
    "Kinematics model that does not exist": (
        {"c.yaml": "components:\n  - {type: Kinematics, module: kinematics, params: "
                   "{model: nosuch}}\n"}, ["c.yaml"],
        [r"components\[0\]\.params\.model: model 'nosuch' not found: not a bundled model"]),
    "SequencePlayer model that does not exist": (
        {"c.yaml": "components:\n  - {type: SequencePlayer, module: sequence_player, params: "
                   "{model: nosuch.yaml}}\n"}, ["c.yaml"],
        [r"components\[0\]\.params\.model: model file 'nosuch\.yaml' not found"]),
    "BlendingPlanner tcp_offset of 3 values": (
        {"c.yaml": "components:\n  - {type: BlendingPlanner, module: blending_planner, params: "
                   "{tcp_offset: [0, 0, 100]}}\n"}, ["c.yaml"],
        [r"components\[0\]\.params\.tcp_offset: expected 6 values, got 3: \[0\.0, 0\.0, "
         r"100\.0\]"]),
    # a cycle trace asked of a system in simulation time wrote nothing
    "cycle trace asked in simulation time": (
        {"c.yaml": GAIN + "simulation: {real_time_factor: 0}\n"},
        ["c.yaml", "-o", "exec_cxt.periodic.trace:YES"],
        [r"-o: exec_cxt\.periodic\.trace: traces wall-clock periodic execution contexts, but "
         r"\S*c\.yaml runs in simulation time \(its simulation key\).*add -o "
         r"rtcf\.simulation\.enable:NO to trace this system on wall-clock ECs, got 'YES'"]),
    "rtcf.web.port equal to rtcf.web.foxglove_port": (
        {"c.yaml": GAIN}, ["c.yaml", "-o", "rtcf.web.port:8790", "-o",
                           "rtcf.web.foxglove_port:8790"],
        [r"-o: rtcf\.web\.foxglove_port: expected a port other than rtcf\.web\.port's \(-o: "
         r"8790; 0 picks a free one\), got '8790'"]),
}

# Warnings: the run goes on (exit 0), and says what it ignored and where.
WARNED: dict[str, tuple[dict[str, str | bytes], list[str], list[str]]] = {
    "unknown -o key": ({"c.yaml": GAIN}, ["c.yaml", "-o", "exec_cxt.perodic.rate:5"],
                       [r"WARNING .*-o: unknown key 'exec_cxt\.perodic\.rate' is ignored; "
                        r"did you mean exec_cxt\.periodic\.rate\?"]),
    "unknown rtc.conf key": ({"c.yaml": GAIN, "r.conf": "# mine\nnaming.formatz: %n.rtc\n"},
                             ["-f", "r.conf", "c.yaml"],
                             [r"WARNING .*r\.conf:2: unknown key 'naming\.formatz' is ignored"]),
    "rtc.conf line without a separator": (
        {"c.yaml": GAIN, "r.conf": "logger.enable\n"}, ["-f", "r.conf", "c.yaml"],
        [r"WARNING .*r\.conf:1: no ':' or '=' in the line, read as key 'logger\.enable'"]),
    "component keys are not unknown": (
        {"c.yaml": GAIN, "r.conf": "example.g.conf.default.gain: 3\n"},
        ["-f", "r.conf", "c.yaml"], [r"^(?![\s\S]*unknown key)"]),
    "relative paths from another folder": (
        {"sub/c.yaml": GAIN, "sub/r.conf": "logger.log_level: INFO\n"},
        ["-f", "sub/r.conf", "sub/c.yaml"], [r"running c \(1 components\)"]),
}


# -- helpers -------------------------------------------------------------------------------------

def _write(folder: Path, files: dict[str, object]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is FIFO:
            os.mkfifo(path)
        elif isinstance(content, Path):
            path.symlink_to(content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _run(folder: Path, args: list[str], nameservers: str, extra: list[str]
         ) -> tuple[int, str, int]:
    env = dict(os.environ)
    env["RTCF_VENV"] = str(Path(sys.executable).parent.parent)   # this very venv
    env.pop("RTCF_CWD", None)
    cmd = [str(RUN), "-o", f"corba.nameservers:{nameservers}", "-o",
           f"manager.modules.load_path:{ROOT / 'components'}", *args, *extra]
    proc = subprocess.Popen(cmd, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out.decode(errors="replace"), proc.pid


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or d.name == str(os.getpid()):
            continue
        try:
            cmdline = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{d.name}: {cmdline}")
    return found


@pytest.fixture(scope="module")
def canaries(naming):
    """Bindings under the names the broken compositions would use; removed at the end."""
    from rtcf.corba.naming import NamingClient
    from rtcf.corba.orb import init_orb
    orb = init_orb({})
    client = NamingClient(orb, f"127.0.0.1:{naming.port}")
    target = client.root        # any live object will do
    paths = [f"{HOST}.host_cxt/{name}.rtc" for name in CANARIES]
    for path in paths:
        client.bind(path, target)
    yield client, {p: orb.object_to_string(target) for p in paths}, orb
    for path in paths:
        client.unbind(path)


def _naming_state(client, orb, paths) -> tuple:
    listing = sorted(client.list(f"{HOST}.host_cxt"))
    iors = {p: orb.object_to_string(client.resolve(p)) for p in paths}
    return listing, iors


# -- the catalogue -------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(case, naming, canaries, tmp_path):
    from rtcf.corba.naming import free_port, naming_service_alive
    files, args, expected = REFUSED[case]
    client, iors, orb = canaries
    before = _naming_state(client, orb, iors)
    _write(tmp_path, files)
    spare = free_port()     # a loopback address where the run would start an omniNames
    rc, out, pgid = _run(tmp_path, ["--duration", "5", *args],
                         f"localhost:{naming.port},localhost:{spare}", [])
    assert rc != 0, f"{case}: exited 0:\n{out}"
    for pattern in expected:
        assert re.search(pattern, out), f"{case}: {pattern!r} not in:\n{out[:3000]}"
    assert "Traceback" not in out, out
    assert "started omniNames" not in out and "running " not in out, out
    assert len(out) < 4000, f"{case}: {len(out)} characters of output"
    assert not _group_alive(pgid), f"{case}: processes left in group {pgid}"
    assert not naming_service_alive("127.0.0.1", spare), f"{case}: omniNames on {spare}"
    assert not _processes_mentioning(f"-start {spare}")
    assert not _processes_mentioning(str(tmp_path))
    assert _naming_state(client, orb, iors) == before, f"{case}: naming entries changed"


@pytest.mark.parametrize("case", sorted(WARNED))
def test_warned(case, tmp_path):
    files, args, expected = WARNED[case]
    _write(tmp_path, files)
    rc, out, pgid = _run(tmp_path, args, "localhost:1", ["--no-corba", "--duration", "0.3"])
    assert rc == 0, f"{case}: exited {rc}:\n{out}"
    for pattern in expected:
        assert re.search(pattern, out), f"{case}: {pattern!r} not in:\n{out[:3000]}"
    assert "Traceback" not in out, out
    assert not _group_alive(pgid)


# -- the run-time path: rtconf set over CORBA (SDO Configuration) -------------------------------

SINE = """\
name: live
components:
  - {type: SineGenerator, module: examples, name: sine_bi, params: {amplitude: 0.5}}
execution_contexts:
  - {name: main, kind: periodic, rate: 50, members: [sine_bi]}
"""


@pytest.fixture(scope="module")
def live_sine(module_launch):
    return module_launch(SINE, "sine_bi")


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
def test_rtconf_set_non_finite_is_refused(value, live_sine, rtsh_cmd):
    mp = live_sine
    cp = rtsh_cmd("rtconf", mp.path("sine_bi"), "set", "amplitude", value)
    assert "Traceback" not in cp.stderr, cp.stderr
    ref = mp.ref("sine_bi")
    got = ref.get_configuration().get_configuration_parameter_value("amplitude").value()
    assert got == "0.5", f"rtconf set amplitude {value} changed it to {got!r}"
    # the refusal names the parameter and the value, through the SDO interface itself
    from rtcf.corba.idl import stub_module
    from rtcf.corba.nv import to_nvlist
    SDO = stub_module("SDOPackage")
    cs = SDO.ConfigurationSet("default", "", to_nvlist({"amplitude": value}))
    with pytest.raises(SDO.InvalidParameter) as info:
        ref.get_configuration().set_configuration_set_values(cs)
    assert "amplitude" in info.value.description and "finite" in info.value.description


def test_scripts_test_reads_paths_from_the_callers_directory():
    """The neighbour of defect 9: scripts/test also runs in the repository root, so a test
    path relative to where the user stands must be made absolute first."""
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent))
    cp = subprocess.run([str(ROOT / "scripts" / "test"), "test_errors.py::"
                         "test_short_values_are_their_repr", "-q", "-p", "no:cacheprovider"],
                        cwd=ROOT / "tests" / "framework", capture_output=True, text=True,
                        timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert cp.returncode == 0 and "1 passed" in cp.stdout, cp.stdout + cp.stderr


def test_scripts_test_passes_a_marker_expression_to_pytest():
    """README's fast subset, ``scripts/test -m "not slow"``: the tests marked slow are left
    out, the others run."""
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent))
    cp = subprocess.run([str(ROOT / "scripts" / "test"), "-m", "not slow", "--co", "-q",
                         "-p", "no:cacheprovider", "tests/integration/test_netns.py",
                         "tests/framework/test_errors.py"],
                        cwd=ROOT, capture_output=True, text=True, timeout=120, env=env,
                        stdin=subprocess.DEVNULL)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    collected = [x for x in cp.stdout.splitlines() if "::" in x]
    assert collected and all(x.startswith("tests/framework/test_errors.py::")
                             for x in collected), cp.stdout
    assert "1 deselected" in cp.stdout, cp.stdout          # test_netns's one test
