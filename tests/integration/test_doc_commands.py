"""Every shell command shown in README.md, bench/README.md and docs/*.md is run by a test.

The commands are read from the pages' code blocks (tests/integration/doc_commands.py). Each
one has an entry in ``HOW``, checked here against the pages both ways (no command without an
entry, no entry without its command): ``Run`` runs it in this module, as written or as a short
variant, in a scratch folder (``scripts``, ``.venv``, ``compositions``, ``model`` and
``bench`` reach the checkout), against the live system it needs on a private naming service;
``By`` names the test elsewhere that runs it, and that test's source must hold the evidence
(what it runs). The naming address ``localhost:2809`` (and the page's second one,
``localhost:2810``) become the private one; the web ports become free ones; a command that
runs until Ctrl-C is interrupted once it shows that it works (``ready``) and must then end
cleanly; a system started with ``&`` is the live system of the commands after it. A page
added to docs/ needs its commands entered here: the first test says which.
"""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from doc_commands import ROOT, doc_commands
from integration_support import Launcher

pytestmark = pytest.mark.slow    # systems started and commands run: minutes

VENV = Path(sys.executable).parent.parent


@dataclass(frozen=True)
class Run:
    """Run here. system: the live system it needs (SYSTEMS) or None; variant: the command run
    instead of the page's (a short duration, a free port; {ns} {port} {port2} filled in);
    ready: it runs until Ctrl-C: this regex in its output shows it works, then SIGINT; expect:
    a regex its output must hold; rc: the exit status expected."""

    system: str | None = None
    variant: str | None = None
    ready: str | None = None
    expect: str = ""
    rc: int = 0
    timeout: float = 180.0


@dataclass(frozen=True)
class By:
    """Run by another test: "path::function", whose source holds ``evidence``."""

    test: str
    evidence: str


WEB_READY = r"web view at http://127\.0\.0\.1:\d+/"
RUNNING = r"running {} \(\d+ components\)"
SIM = "rtcf.simulation.real_time_factor"
CONTROLLERS_DOC = "tests/integration/test_writing_controllers_doc.py::" \
    "test_writing_controllers_as_the_page_says"
CONTROLLERS_EFFORT = "tests/integration/test_writing_controllers_doc.py::" \
    "test_the_effort_controller_of_the_page_moves_the_simulated_arm"
COMPONENTS_DOC = "tests/integration/test_writing_components_doc.py::" \
    "test_writing_components_as_the_page_says"

# The live systems the client commands need: the command that starts it (as a page shows it)
# and the instances it binds.
SYSTEMS = {
    "nao_sim": ("compositions/nao_sim.yaml", ["SequencePlayer0", "DCM0", "Kinematics0"]),
    "arm_blending": ("compositions/arm_blending.yaml", ["BlendingPlanner0"]),
    "controllers": ("compositions/nao_controllers.yaml", ["DCM0", "ControllerManager0"]),
    "controllers_demo": ("compositions/nao_controllers.yaml", ["DCM0", "ControllerManager0"]),
}

# page command (as extracted: comments stripped, blanks single) -> how a test runs it
HOW: dict[str, Run | By] = {
    # -- systems started from the command line ---------------------------------------------
    "scripts/run": Run(ready=RUNNING.format("nao_sim")),
    "scripts/run compositions/demo.yaml -o exec_cxt.periodic.spin_us:0 --duration 5":
        Run(variant="scripts/run compositions/demo.yaml -o exec_cxt.periodic.spin_us:0 "
                    "--duration 2", expect=RUNNING.format("demo")),
    "scripts/run compositions/demo.yaml -o corba.nameservers:localhost:2810":
        Run(ready=RUNNING.format("demo")),
    "scripts/run --duration 20 -o rtcf.simulation.real_time_factor:0":
        Run(expect=r"simulation: 20\.000 s of simulated time"),
    "scripts/run compositions/arm_sim.yaml": Run(ready=RUNNING.format("arm_sim")),
    "scripts/run compositions/arm_sim_split.yaml": Run(ready=RUNNING.format("arm_sim_split")),
    "scripts/run compositions/nao_sim_split.yaml --duration 20 -o "
    f"{SIM}:0": Run(expect=r"simulation: 20\.000 s of simulated time.*lockstep: \d+ steps "
                          r"to 1 other process \(motion\)"),
    "scripts/run compositions/demo.yaml -o rtcf.simulation.enable:YES -o "
    f"{SIM}:0 --duration 60": Run(expect=RUNNING.format("demo")),
    "scripts/run --duration 10 -o rtcf.simulation.enable:NO -o exec_cxt.periodic.trace:YES "
    "-o exec_cxt.periodic.trace_file:/tmp/t-%n.npz":
        Run(variant="scripts/run --duration 2 -o rtcf.simulation.enable:NO -o "
                    "exec_cxt.periodic.trace:YES -o exec_cxt.periodic.trace_file:{work}/t-%n.npz",
            expect=r"cycle trace of 'dcm' saved to \S*t-dcm\.npz"),
    ".venv/bin/python -m rtcf.trace /tmp/t-dcm.npz":
        Run(variant=".venv/bin/python -m rtcf.trace {work}/t-dcm.npz",
            expect=r"EC dcm at 100 Hz, \d+ cycles traced"),
    "scripts/run -o corba.nameservers:localhost:2809 --duration 60 &":
        Run(variant="scripts/run -o corba.nameservers:localhost:2809 --duration 2",
            expect=RUNNING.format("nao_sim")),
    "scripts/run compositions/arm_blending.yaml -o corba.nameservers:localhost:2809 &":
        Run(variant="scripts/run compositions/arm_blending.yaml -o "
                    "corba.nameservers:localhost:2809 --duration 2",
            expect=RUNNING.format("arm_blending")),
    "scripts/run compositions/nao_controllers.yaml --duration 60 &":
        Run(variant="scripts/run compositions/nao_controllers.yaml --duration 2",
            expect=RUNNING.format("nao_controllers")),
    "scripts/run -f compositions/hrpsys_nao.conf": Run(ready=r"running \S+ \(\d+ components\)"),
    "scripts/run compositions/nao_dcm.yaml -o rtcf.simulation.enable:YES -o "
    f"{SIM}:0": Run(ready=RUNNING.format("nao_dcm")),
    "scripts/run compositions/nao_sim.yaml -o rtcf.simulation.enable:NO":
        Run(ready=RUNNING.format("nao_sim")),
    "scripts/run --web": Run(variant="scripts/run --web -o rtcf.web.port:{port}",
                             ready=WEB_READY),
    "scripts/run --web -o rtcf.web.port:9000":
        Run(variant="scripts/run --web -o rtcf.web.port:{port}", ready=WEB_READY),
    "scripts/run --web -o rtcf.web.foxglove_port:8765":
        Run(variant="scripts/run --web -o rtcf.web.port:{port} -o "
                    "rtcf.web.foxglove_port:{port2}", ready=WEB_READY),
    # -- the default system's clients (README "Quickstart", observing.md) --------------------
    ".venv/bin/rtls -l localhost:2809/$(hostname).host_cxt/":
        Run("nao_sim", expect=r"DCM0\.rtc"),
    ".venv/bin/rtcat -ll localhost:2809/$(hostname).host_cxt/DCM0.rtc":
        Run("nao_sim", expect=r"DCM0\.rtc"),
    ".venv/bin/rtconf localhost:2809/$(hostname).host_cxt/Kinematics0.rtc set pose_space 2":
        Run("nao_sim"),
    "scripts/motion_examples": Run("nao_sim", variant="scripts/motion_examples "
                                   "--nameserver localhost:2809", expect="Robot Position"),
    "scripts/nao_sequence_demo": Run("nao_sim", variant="scripts/nao_sequence_demo "
                                     "--nameserver localhost:2809"),
    "scripts/dcm_chest_leds": Run("nao_sim", variant="scripts/dcm_chest_leds --nameserver "
                                  "localhost:2809 --example time-mixed"),
    "scripts/dcm_chest_leds --nameserver localhost:2810 --dcm DCM0": Run("nao_sim"),
    ".venv/bin/rtcf-print DCM0:q -n 5": Run("nao_sim", expect=r"DCM0\.q \["),
    ".venv/bin/rtcf-record -o run.mcap --all --duration 10":
        Run("nao_sim", variant=".venv/bin/rtcf-record -o run.mcap --all --duration 2"),
    ".venv/bin/rtcf-play run.mcap --map DCM0.q=Kinematics0:q": Run("nao_sim"),
    ".venv/bin/rtcf-inject SequencePlayer0:basePosInit '{x: 0.0, y: 0.0, z: 0.33}'":
        Run("nao_sim"),
    ".venv/bin/rtcf-graph -o system.svg": Run("nao_sim"),
    "rtcf-print localhost:2809/$(hostname).host_cxt/DCM0.rtc:q":
        Run("nao_sim", ready=r"DCM0\.q \["),
    "rtcf-print /localhost/$(hostname).host_cxt/DCM0.rtc:q":   # the page's default port 2809
        Run("nao_sim", variant="rtcf-print /localhost:2809/$(hostname).host_cxt/DCM0.rtc:q",
            ready=r"DCM0\.q \["),
    "rtcf-print DCM0:q": Run("nao_sim", ready=r"DCM0\.q \["),
    "rtcf-print DCM0:q Kinematics0:headPose -n 10":
        Run("nao_sim", expect=r"Kinematics0\.headPose \["),
    "rtcf-print DCM0:q --rate 2": Run("nao_sim", ready=r"DCM0\.q \["),
    "rtcf-print DCM0:q --json | jq .data[0]":
        Run("nao_sim", variant="rtcf-print DCM0:q --json -n 3 | jq .data[0]",
            expect=r"^-?\d"),
    "rtcf-record -o run.mcap --all": Run("nao_sim", variant="rtcf-record -o run2.mcap --all",
                                         ready=r"recording \d+ ports to run2\.mcap"),
    "rtcf-record -o arm.mcap DCM0:q DCM0:qCommand --duration 30":
        Run("nao_sim", variant="rtcf-record -o arm.mcap DCM0:q DCM0:qCommand --duration 2"),
    "rtcf-record -o run.mcap --all -n robot:2809 --encoding cdr":
        Run("nao_sim", variant="rtcf-record -o run3.mcap --all -n localhost:2809 --encoding "
                               "cdr --duration 2"),
    "rtcf-record -o run.mcap --all --max-rate 50":
        Run("nao_sim", variant="rtcf-record -o run4.mcap --all --max-rate 50 --duration 2"),
    "rtcf-play run.mcap --only DCM0.q": Run("nao_sim"),
    "rtcf-play run.mcap --map DCM0.q=Kinematics0:q --rate 0.5 --loop":
        Run("nao_sim", ready=r"playing run\.mcap: \d+ messages"),
    "rtcf-play run.mcap --all": Run("nao_sim"),
    "rtcf-inject DCM0:qRef '[0.1, 0.0, -0.2, ...]'":     # the page elides the 26 values
        Run("nao_sim", variant="rtcf-inject DCM0:qRef '[0.1, 0.0, -0.2" + ", 0.0" * 23 + "]'"),
    "rtcf-inject Kinematics0:q '{tm: {sec: 5, nsec: 0}, data: [0, 0]}'": Run("nao_sim"),
    "rtcf-inject SequencePlayer0:qInit '[0, 0]' --rate 50 -c 100": Run("nao_sim"),
    "rtcf-graph -o system.svg": Run("nao_sim"),
    "rtcf-graph -o system.png": Run("nao_sim"),
    "rtcf-graph --json": Run("nao_sim", expect=r'"components"'),
    ".venv/bin/rtcf-web -n localhost:2809":
        Run("nao_sim", variant=".venv/bin/rtcf-web -n localhost:2809 --port {port}",
            ready=r"rtcf-web: serving http://"),
    "RTCTREE_NAMESERVERS=localhost:2809 .venv/bin/rtcf-web --port 9000":
        Run("nao_sim", variant="RTCTREE_NAMESERVERS=localhost:2809 .venv/bin/rtcf-web "
                               "--port {port}", ready=r"rtcf-web: serving http://"),
    ".venv/bin/rtcf-web --allow-host robot.local --address 0.0.0.0":
        Run("nao_sim", variant=".venv/bin/rtcf-web --allow-host robot.local --address "
                               "0.0.0.0 --port {port}", ready=r"rtcf-web: serving http://"),
    ".venv/bin/rtcf-web --help": Run(expect=r"--foxglove-port"),
    ".venv/bin/rtcf-web -n localhost:2809 --foxglove-port 8765":
        Run("nao_sim", variant=".venv/bin/rtcf-web -n localhost:2809 --port {port} "
                               "--foxglove-port {port2}", ready=r"Foxglove WebSocket"),
    "scripts/sequence_player_plot --pattern model/patterns/nao_wave --out wave.png": Run(),
    # -- the arm (README "Blended arm moves") ------------------------------------------------
    "scripts/blending_demo --png blending_demo.png":
        Run("arm_blending", variant="scripts/blending_demo --nameserver localhost:2809 "
                                    "--png blending_demo.png"),
    "scripts/blending_demo --local": Run(),
    ".venv/bin/python bench/bench_sim_system.py":
        Run(variant=".venv/bin/python bench/bench_sim_system.py --seconds 1 --rounds 1 "
                    "--warmup 0 --only fast --system nao_sim", expect=r"nao_sim"),
    # -- batches of trials (docs/simulator.md "Batches of trials") -------------------------
    "scripts/batch compositions/arm_sim.yaml --duration 5 --trials 8":
        Run(variant="scripts/batch compositions/arm_sim.yaml --duration 0.2 --trials 2",
            expect=r"2 of 2 trials ran .*summary in \S*batch-arm_sim/summary\.csv"),
    "scripts/batch compositions/arm_sim.yaml --duration 2 --out arm-postures --sweep "
    "'Simulator0.initial_q=[[0, 0, 1.5708, 0, 1.5708, 0], [0, 0.3, 1.2, 0, 1.5708, 0]]'":
        Run(variant="scripts/batch compositions/arm_sim.yaml --duration 0.2 --out arm-postures "
                    "--sweep 'Simulator0.initial_q=[[0, 0, 1.5708, 0, 1.5708, 0], "
                    "[0, 0.3, 1.2, 0, 1.5708, 0]]' && ls arm-postures/trial-001/log",
            expect=r"2/2 trials done(.|\n)*arm_sim_q\.npz"),
    # -- the benchmarks' own page (bench/README.md): a short run of each ---------------------
    # (the synopsis lines show the options in brackets: run with small values)
    "PYTHONPATH=. python bench/bench_ec.py [--seconds 10] [--rate 1000] [--no-fifo]":
        Run(variant="PYTHONPATH=. python bench/bench_ec.py --seconds 0.5 --no-fifo",
            expect=r"EC overhead per component"),
    "PYTHONPATH=. python bench/bench_ports.py [--batches 200] [--per-batch 2000] [--seconds 1] "
    "[--profile]":
        Run(variant="PYTHONPATH=. python bench/bench_ports.py --batches 3 --per-batch 200 "
                    "--seconds 0.2", expect=r"\bus\b"),
    "PYTHONPATH=.:components python bench/bench_kinematics.py [--targets 200] [--big 1000000] "
    "[--profile]":
        Run(variant="PYTHONPATH=.:components python bench/bench_kinematics.py --targets 3 "
                    "--ikpy-targets 1 --big 1000 --batches 2 --per-batch 20 --complete 3",
            expect=r"Pinocchio"),
    "PYTHONPATH=. python bench/bench_simtime.py [--seconds 20] [--members 1] [--repeat 5]":
        Run(variant="PYTHONPATH=. python bench/bench_simtime.py --seconds 0.5 --repeat 1",
            expect=r"bare loop"),
    ".venv/bin/python bench/bench_controllers.py --rows f --rounds 10 --round-seconds 3":
        Run(variant=".venv/bin/python bench/bench_controllers.py --rows f --rounds 1 "
                    "--round-seconds 1 --no-fifo", expect=r"getStatistics"),
    ".venv/bin/python bench/bench_sim_system.py --seconds 5 --rounds 2":
        Run(variant=".venv/bin/python bench/bench_sim_system.py --seconds 1 --rounds 1 "
                    "--fast-rounds 1 --warmup 0", expect=r"arm_sim"),
    ".venv/bin/python bench/bench_record.py --skip-system --seconds 10 --rounds 2":
        Run(variant=".venv/bin/python bench/bench_record.py --skip-system --seconds 1 "
                    "--rounds 1 --messages 2000 --repeat 1 --burst 1",
            expect=r"recorder, no CORBA \(json\)"),
    ".venv/bin/python bench/bench_stalls.py --seconds 120":
        Run(variant=".venv/bin/python bench/bench_stalls.py --seconds 0.5",
            expect=r"late on two CPUs within 10 ms of each other: \d+ time"),
    ".venv/bin/python bench/bench_lockstep.py --rounds 3":
        Run(variant=".venv/bin/python bench/bench_lockstep.py --only systems --rounds 1 "
                    "--seconds 0.5", expect=r"arm_sim_split"),
    ".venv/bin/python bench/bench_lockstep.py --only planner -o "
    "manager.realtime.switch_interval_us:200":
        Run(variant=".venv/bin/python bench/bench_lockstep.py --only planner --rounds 1 -o "
                    "manager.realtime.switch_interval_us:200",
            expect=r"manager options: manager\.realtime\.switch_interval_us:200(.|\n)*"
                   r"arm_sim_split"),
    ".venv/bin/python bench/bench_sim_system.py --only fast --system nao_sim":
        Run(variant=".venv/bin/python bench/bench_sim_system.py --only fast --system nao_sim "
                    "--seconds 1 --fast-rounds 1 --warmup 0", expect=r"nao_sim"),
    ".venv/bin/python bench/bench_sim_system.py --only realtime -o "
    "exec_cxt.periodic.sched_fifo:NO":
        Run(variant=".venv/bin/python bench/bench_sim_system.py --only realtime -o "
                    "exec_cxt.periodic.sched_fifo:NO --seconds 1 --rounds 1 --warmup 0",
            expect=r"cyclictest"),
    ".venv/bin/python bench/bench_batch.py --trials 8 --duration 5 --rounds 2":
        Run(variant=".venv/bin/python bench/bench_batch.py --trials 2 --duration 0.2 "
                    "--rounds 1", expect=r"batch / one after another: median"),
    ".venv/bin/python bench/profile_sim.py --system arm_sim --seconds 20":
        Run(variant=".venv/bin/python bench/profile_sim.py --system arm_sim --seconds 0.5",
            expect=r"in the cycle|py-spy: not installed"),
    ".venv/bin/python bench/bench_web.py --seconds 10 --rounds 2":
        Run(variant=".venv/bin/python bench/bench_web.py --seconds 1 --rounds 1 --warmup 3 "
                    "--only default", expect=r"with web view"),
    '.venv/bin/python bench/bench_web.py --only default-1k --modes "without,server only,page '
    'without plot,with web view"':
        Run(variant='.venv/bin/python bench/bench_web.py --only default-1k --modes "without,'
                    'server only,page without plot,with web view" --seconds 1 --rounds 1 '
                    "--warmup 3", expect=r"page without plot"),
    # -- controllers (README "Real-time controllers") ----------------------------------------
    "scripts/controllers_demo": Run("controllers_demo", variant="scripts/controllers_demo "
                                    "--nameserver localhost:2809"),
    "M=localhost:2809/$(hostname).host_cxt/ControllerManager0.rtc": Run("controllers"),
    ".venv/bin/rtcf-controllers list $M -v": Run("controllers", expect=r"head_pd"),
    ".venv/bin/rtcf-controllers spawn $M larm_pd": Run("controllers"),
    ".venv/bin/rtcf-controllers switch $M --stop larm_pd --strict": Run("controllers"),
    ".venv/bin/rtcf-controllers switch $M --start larm_pd --strict": Run("controllers"),
    # -- walking (README, docs/walking.md) ---------------------------------------------------
    "scripts/run compositions/nao_walk.yaml": Run(ready=RUNNING.format("nao_walk")),
    "scripts/run -f compositions/hrpsys_walk.conf": Run(ready=r"running \S+ \(\d+ components\)"),
    ".venv/bin/python bench/bench_walk.py":
        Run(variant=".venv/bin/python bench/bench_walk.py --only cost --seconds 1",
            expect=r"nao_walk, walking"),
    "scripts/hrpsys_walk": By("tests/integration/test_hrpsys_walk.py::"
                              "test_hrpsys_config_style_client_walks_the_nao", "hrpsys_walk.py"),
    "scripts/walk_demo": By("tests/components/naoqi/test_walk_demo_script.py::"
                            "test_the_demo_walks_a_square_and_draws_it", "walk_demo"),
    # -- DRL programs (docs/doosan.md) -------------------------------------------------------
    "RTCF_NAMESERVER=localhost:2809 .venv/bin/python my_program.py":     # the user's program
        By("tests/integration/test_client_scripts.py::"
           "test_drl_motion_script_runs_against_the_system", '"RTCF_NAMESERVER"'),
    ".venv/bin/python -m rtcf_components.blending_planner.dsr_run --nameserver localhost:2809 "
    "dsr_service_motion_simple.py":
        By("tests/integration/test_client_scripts.py::"
           "test_a_ros2_style_dsr_script_runs_unchanged_and_stops_on_ctrl_c",
           '"rtcf_components.blending_planner.dsr_run"'),
    # -- run by other tests ----------------------------------------------------------------
    "scripts/test": By("tests/integration/test_broken_input.py::"
                       "test_scripts_test_reads_paths_from_the_callers_directory",
                       '"scripts" / "test"'),
    'scripts/test -m "not slow"': By("tests/integration/test_broken_input.py::"
                                     "test_scripts_test_passes_a_marker_expression_to_pytest",
                                     '"-m", "not slow"'),
    "scripts/test tests/framework/test_execution.py":
        Run(variant="scripts/test tests/framework/test_execution.py -q -p no:cacheprovider",
            expect=r"\d+ passed"),
    "scripts/sim_demo": By("tests/components/simulator/test_sim_demo_script.py::"
                           "test_the_demo_writes_filmstrips_and_plots_of_both_robots",
                           "sim_demo"),
    "cd ~/my_components": By(COMPONENTS_DOC, "page_commands()"),
    "~/rtcf/scripts/run filtering.yaml -o manager.modules.load_path:$HOME/my_components":
        By(COMPONENTS_DOC, "load_path:$HOME/my_components"),
    "cd ~/my_components && ~/rtcf/.venv/bin/python -m pytest mything/tests":
        By(COMPONENTS_DOC, "-m pytest"),
    "PYTHONPATH=~/my_components ~/rtcf/.venv/bin/python -m pytest "
    "~/my_components/mything/tests": By(COMPONENTS_DOC, "-m pytest"),
    "~/rtcf/scripts/run filtering.yaml --duration 10 -o manager.modules.load_path:. -o "
    "corba.nameservers:localhost:2809": By(COMPONENTS_DOC, "--duration 10"),
    "~/rtcf/.venv/bin/rtcat -l localhost:2809/$(hostname).host_cxt/lp.rtc":
        By(COMPONENTS_DOC, "rtcat"),
    "~/rtcf/.venv/bin/rtconf localhost:2809/$(hostname).host_cxt/lp.rtc set cutoff 0.5":
        By(COMPONENTS_DOC, "rtconf"),
    "~/rtcf/scripts/run my_arm.yaml": By(CONTROLLERS_EFFORT, '"arm"'),
    "~/rtcf/.venv/bin/python check_arm.py": By(CONTROLLERS_EFFORT, '"effort"'),
    "cd ~/myctl": By(CONTROLLERS_DOC, '"system"'),
    "~/rtcf/scripts/run my_system.yaml": By(CONTROLLERS_DOC, '"system"'),
    **{c: By(CONTROLLERS_DOC, '"client"') for c in (
        "M=localhost:2809/$(hostname).host_cxt/ControllerManager0.rtc",
        "~/rtcf/.venv/bin/rtcf-controllers spawn $M sway --timeout 30",
        "~/rtcf/.venv/bin/rtcf-controllers list $M -v",
        "~/rtcf/.venv/bin/rtcf-controllers list-joints $M --claimed",
        "~/rtcf/.venv/bin/rtcf-controllers statistics $M",
        "~/rtcf/.venv/bin/rtconf $M get running_controllers",
        "~/rtcf/.venv/bin/rtcf-controllers start $M hold || echo \"refused, as it should be\"",
        "~/rtcf/.venv/bin/rtcf-controllers switch $M --start hold --stop sway",
        "~/rtcf/.venv/bin/rtcf-controllers unload $M sway",
        "sed -i 's/0.0 <= self.amplitude <= 0.5/0.0 <= self.amplitude <= 0.3/' "
        "~/myctl/my_controllers.py",
        "~/rtcf/.venv/bin/rtcf-controllers load $M sway",
        "~/rtcf/.venv/bin/rtcf-controllers switch $M --start sway --stop hold")
       if c != "M=localhost:2809/$(hostname).host_cxt/ControllerManager0.rtc"},
}


# -- the table is the pages' ---------------------------------------------------------------------

def test_every_command_of_the_pages_has_a_test():
    shown = doc_commands()
    missing = [str(c) for c in shown if c.text not in HOW]
    assert not missing, ("commands shown in the pages that no test runs (enter each in HOW, "
                         "tests/integration/test_doc_commands.py):\n" + "\n".join(missing))
    texts = {c.text for c in shown}
    stale = [k for k in HOW if k not in texts]
    assert not stale, "HOW entries for commands no page shows any more:\n" + "\n".join(stale)


def _function_source(ref: str) -> str | None:
    path, _, name = ref.partition("::")
    tree = ast.parse((ROOT / path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment((ROOT / path).read_text(), node)
    return None


def test_the_tests_named_exist_and_run_what_they_are_named_for():
    for text, how in HOW.items():
        if isinstance(how, By):
            src = _function_source(how.test)
            assert src is not None, f"{text}: {how.test} does not exist"
            assert how.evidence in src, f"{text}: {how.test} does not hold {how.evidence!r}"
        elif how.system is not None:
            assert how.system in SYSTEMS, f"{text}: unknown system {how.system!r}"


# -- running them ---------------------------------------------------------------------------------

def _free_port() -> int:
    from rtcf.corba.naming import free_port
    return free_port()


@pytest.fixture(scope="module")
def ns():
    """A naming service of this module's own (the systems bind the usual names)."""
    from rtcf.corba.naming import ensure_naming_service
    handle = ensure_naming_service("127.0.0.1", _free_port(), timeout=15)
    assert handle.started
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A scratch folder where the pages' relative paths reach the checkout."""
    folder = tmp_path_factory.mktemp("doc_commands")
    for name in ("compositions", "model", "bench"):
        (folder / name).symlink_to(ROOT / name)
    return folder


@pytest.fixture(scope="module")
def systems(ns, tmp_path_factory):
    """The live systems, started when a command first needs one; stopped at the end."""
    launcher = Launcher(ns, tmp_path_factory.mktemp("systems"))
    running: dict[str, object] = {}

    def get(key: str | None):
        """The live system ``key``; None: none (a command that starts its own)."""
        if key not in running:
            for other in list(running):       # one system at a time: they share names
                running.pop(other).stop()
            if key is None:
                return None
            path, names = SYSTEMS[key]
            running[key] = launcher(ROOT / path, names)
        return running[key]
    yield get
    launcher.close()


def localize(text: str, port: int, web: int, web2: int, work: Path) -> str:
    """The command as it runs here: the private naming service, free web ports, the scratch
    folder, the checkout's scripts and venv."""
    text = (text.replace("{ns}", str(port)).replace("{port2}", str(web2))
            .replace("{port}", str(web)).replace("{work}", str(work)))
    text = re.sub(r"localhost:28(09|10)\b", f"localhost:{port}", text)
    text = re.sub(r"(?<![\w/.~])scripts/", f"{ROOT}/scripts/", text)
    text = re.sub(r"(?<![\w/.~])\.venv/bin/", f"{VENV}/bin/", text)
    if re.search(rf"{re.escape(str(ROOT))}/scripts/run\b", text) and \
            "corba.nameservers" not in text:
        text += f" -o corba.nameservers:localhost:{port}"
    return text


SETUP = {c.text: c.setup for c in reversed(doc_commands())}   # the first occurrence's


def run(text: str, how: Run, folder: Path, port: int) -> tuple[int, str]:
    web, web2 = _free_port(), _free_port()
    cmd = "; ".join(SETUP.get(text, ()) + (how.variant or text,))   # its block's M=...
    cmd = localize(cmd, port, web, web2, folder)
    env = dict(os.environ, RTCF_VENV=str(VENV), RTCTREE_NAMESERVERS=f"localhost:{port}",
               PATH=f"{VENV}/bin{os.pathsep}{os.environ.get('PATH', '')}", COLUMNS="100",
               PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    out_path = folder / f"out-{abs(hash(text))}.log"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(["bash", "-c", cmd], cwd=folder, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        try:
            if how.ready is None:
                rc = proc.wait(how.timeout)
            else:
                deadline = time.monotonic() + how.timeout
                while not re.search(how.ready, out_path.read_text(errors="replace")):
                    assert proc.poll() is None, \
                        f"{cmd}\nended ({proc.returncode}) before it showed {how.ready!r}:\n" \
                        + out_path.read_text(errors="replace")[-3000:]
                    assert time.monotonic() < deadline, \
                        f"{cmd}\ndid not show {how.ready!r}:\n" + \
                        out_path.read_text(errors="replace")[-3000:]
                    time.sleep(0.2)
                time.sleep(0.5)
                os.killpg(proc.pid, signal.SIGINT)        # Ctrl-C, as a user stops it
                rc = proc.wait(60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            _kill_session(proc.pid)
    return rc, out_path.read_text(errors="replace")


def _kill_session(sid: int) -> None:
    """Kills what the command left running in its session (a browser a benchmark's thread
    never quit, a child whose parent ended): nothing a test starts outlives it."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if int((d / "stat").read_text().rsplit(")", 1)[1].split()[3]) == sid:
                os.kill(int(d.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


RUNS = [(text, how) for text, how in HOW.items() if isinstance(how, Run)]


@pytest.mark.parametrize("text, how", RUNS, ids=[f"{i:02d} {t[:60]}" for i, (t, _) in
                                                   enumerate(RUNS)])
def test_the_command_works(text, how, ns, work, systems):
    if how.system is not None or text.startswith("scripts/run"):
        systems(how.system)                 # a system of its own: nothing else running
    rc, out = run(text, how, work, ns.port)
    expected = (how.rc, 130) if how.ready else (how.rc,)      # bash reports a Ctrl-C as 130
    assert rc in expected, f"{text}: exit status {rc}:\n{out[-3000:]}"
    assert "Traceback" not in out, f"{text}:\n{out[-3000:]}"
    if how.expect:
        assert re.search(how.expect, out, re.M), f"{text}: {how.expect!r} not in:\n{out[-3000:]}"
