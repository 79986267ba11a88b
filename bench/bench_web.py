"""What the live web view costs the system it shows: the same runs with and without it.

Scenarios, run through scripts/run as bench_system.py does (its own process, the EC cycle
trace for lateness and overruns):

* ``default``: compositions/nao_dcm.yaml at 100 Hz;
* ``default-1k``: the same composition with its EC at 1 kHz.

Each runs ``--rounds`` times without the web view and with it (``rtcf.web.enable: YES``: the
manager's web child process, and a headless Chromium on the page with a live plot of
``DCM0.q``, 26 doubles, updating at 25 frames a second), alternating. Reported: overruns and
lateness percentiles of the EC in the measured window, the CPU of the manager process alone,
of the web server child and of the browser. Asserts nothing.

    .venv/bin/python bench/bench_web.py --seconds 10 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench_system import PS, composition, free_port, run_rtcf  # noqa: E402
from common import machine_line, table  # noqa: E402

PLOT = ("DCM0", "q")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000"]


def _procs() -> dict[int, tuple[int, float, str]]:
    """pid -> (parent pid, CPU seconds, command line) of every process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[int(d.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / tick, cmd)
    return out


def _tree(procs: dict, root: int) -> float:
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += procs.get(pid, (0, 0.0, ""))[1]
        todo += [p for p, v in procs.items() if v[0] == pid]
    return total


class Viewer(threading.Thread):
    """Measures the CPU of the manager (found by its rtcf.web.port marker), and with ``web``
    of the web child and the browser, over [warmup, warmup + seconds - 1]; with ``web`` it
    first opens the page once the web child answers and plots DCM0.q."""

    def __init__(self, port: int, warmup: float, seconds: float, web: bool,
                 page: bool = True, plot: bool = True):
        super().__init__(daemon=True)
        self.port, self.warmup, self.seconds, self.web = port, warmup, seconds, web
        self.page, self.plot = page, plot
        self.done = threading.Event()
        self.cpu: dict[str, float] = {}
        self.points = 0
        self.error = ""
        self.service: Any = None          # selenium's chromedriver service, Chromium under it
        self.profile: str | None = None

    def kill_browser(self) -> None:
        """Kills chromedriver and every process under it: for a viewer thread still stuck
        (in the driver's start, a page that never loads) when its run is over, so that no
        browser outlives this program."""
        process = getattr(self.service, "process", None)
        if process is None:
            return
        procs, todo, tree = _procs(), [process.pid], []
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo += [p for p, v in procs.items() if v[0] == pid]
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def run(self) -> None:
        t_start = time.monotonic()
        url = f"http://127.0.0.1:{self.port}/"
        driver = None
        try:
            if not (self.web and self.page):
                self._measure(t_start, None)
                return
            deadline = t_start + 30
            while True:
                try:
                    with urllib.request.urlopen(url + "api/system", timeout=1) as r:
                        if any(c["name"] == PLOT[0] for c in json.loads(r.read())["components"]):
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("the web view did not answer")
                time.sleep(0.2)
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            opts = webdriver.ChromeOptions()
            opts.binary_location = shutil.which("chromium")
            self.profile = profile = tempfile.mkdtemp(prefix="bench-web-chromium-")
            for f in FLAGS + [f"--user-data-dir={profile}"]:
                opts.add_argument(f)
            self.service = Service(shutil.which("chromedriver"))
            driver = webdriver.Chrome(service=self.service, options=opts)
            driver.get(url)
            deadline = time.monotonic() + 30
            while not driver.execute_script("return !!(window.rtcf && rtcf.system)"):
                if self.done.is_set() or time.monotonic() > deadline:
                    raise RuntimeError("the page did not show the system within 30 s")
                time.sleep(0.1)
            if self.plot:
                driver.execute_script("select(rtcf.system.components.find(c => c.name === "
                                      "arguments[0]).id); plot(rtcf.system.components.find("
                                      "c => c.name === arguments[0]).id, arguments[1]);",
                                      *PLOT)
            self._measure(t_start, driver)
            self.points = int(driver.execute_script(
                "return Object.values(rtcf.plots).reduce((a, p) => a + (p.count || 0), 0)"))
            self.done.wait(self.seconds + 60)
        except Exception as e:           # reported in the table, the run goes on
            self.error = f"{type(e).__name__}: {e}"
        finally:
            if driver is not None:
                try:
                    driver.quit()
                except Exception:               # the browser was killed: nothing to quit
                    pass
            if self.profile is not None:
                shutil.rmtree(self.profile, ignore_errors=True)

    def _measure(self, t_start: float, driver: Any) -> None:
        time.sleep(max(0.0, t_start + self.warmup - time.monotonic()))
        before = self._sample(driver)
        t0 = time.monotonic()
        time.sleep(max(0.5, self.seconds - 1.0))
        after = self._sample(driver)
        wall = time.monotonic() - t0
        self.cpu = {k: 100.0 * (after[k] - before[k]) / wall for k in after if k in before}

    def _sample(self, driver: Any) -> dict[str, float]:
        procs = _procs()
        marker = f"rtcf.web.port:{self.port}"
        manager = next((p for p, v in procs.items()
                        if "rtcf.manager" in v[2] and marker in v[2]), None)
        out = {"manager": procs[manager][1]} if manager is not None else {}
        web = next((p for p, v in procs.items()
                    if "rtcf.web" in v[2] and f"--port {self.port}" in v[2]), None)
        if web is not None:
            out["web"] = _tree(procs, web)
        if driver is not None:
            out["browser"] = _tree(procs, driver.service.process.pid)
        return out


MODES = {"without": (False, False, False), "server only": (True, False, False),
         "page without plot": (True, True, False), "with web view": (True, True, True)}


def one_run(name: str, mode: str, args: argparse.Namespace, tmp: Path) -> dict:
    web, page, plot = MODES[mode]
    port = free_port()              # also marks this run's manager in the process list
    overrides = list(args.overrides) + [f"rtcf.web.port:{port}"]
    if web:
        overrides.append("rtcf.web.enable:YES")
    viewer = Viewer(port, args.warmup, args.seconds, web, page, plot)
    viewer.start()
    try:
        res = run_rtcf(name, args.seconds, tmp, overrides, args.warmup)
    finally:
        viewer.done.set()
        viewer.join(30)
        if viewer.is_alive():
            viewer.kill_browser()
            viewer.error = viewer.error or "the browser did not end within 30 s: killed"
    res["viewer"] = viewer
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=float, default=8.0,
                    help="seconds from launch to the measured window (start-up excluded)")
    ap.add_argument("--only", choices=("default", "default-1k"), action="append")
    ap.add_argument("--modes", default="without,with web view",
                    help=f"comma-separated, of: {', '.join(MODES)}")
    ap.add_argument("-o", dest="overrides", action="append", default=[])
    args = ap.parse_args()
    browser = shutil.which("chromium") and shutil.which("chromedriver")
    print(machine_line())
    print(f"# {args.seconds:g} s per run, {args.rounds} rounds; the web view: manager's web "
          f"child + headless Chromium plotting {'.'.join(PLOT)}"
          + ("" if browser else " (chromium or chromedriver missing: page not opened)"))
    headers = ["run", "round", "cycles", "overruns", "p50 [us]", "p99 [us]", "max [us]",
               "CPU manager [%]", "CPU tree [%]", "CPU web child [%]", "CPU browser [%]",
               "points plotted"]
    rows, summary = [], []
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmpd:
        tmp = Path(tmpd)
        for name in args.only or ["default", "default-1k"]:
            composition(name, tmp)
            per_mode: dict[str, list] = {m.strip(): [] for m in args.modes.split(",")}
            for rnd in range(1, args.rounds + 1):
                for mode in per_mode:
                    r = one_run(name, mode, args, tmp)
                    v = r["viewer"]
                    for ec, e in sorted(r["ecs"].items()):
                        late = e.get("late", np.zeros(0))
                        p = np.percentile(late, PS) if len(late) else [np.nan] * 3
                        cpu = v.cpu
                        row = [f"{name} {mode} EC {ec}", rnd, e.get("cycles"),
                               e.get("overruns_window"), p[0], p[1],
                               float(late.max()) if len(late) else np.nan,
                               cpu.get("manager"), r["cpu"], cpu.get("web"),
                               cpu.get("browser"),
                               (v.error or v.points) if v.plot and v.page and v.web
                               else None]
                        rows.append(row)
                        per_mode[mode].append(row)
            for mode, rs in per_mode.items():
                med = lambda k: (float(np.median([x[k] for x in rs if x[k] is not None]))  # noqa
                                 if any(x[k] is not None for x in rs) else None)
                summary.append([f"{name} {mode}", med(3), med(5), med(6), med(8), med(7),
                                med(9), med(10)])
    print(table(headers, rows))
    print()
    print("medians over the rounds:")
    print(table(["scenario", "overruns", "p99 [us]", "max [us]", "CPU tree [%]",
                 "CPU manager [%]", "CPU web child [%]", "CPU browser [%]"], summary, digits=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
