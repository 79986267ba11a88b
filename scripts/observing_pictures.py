"""The two pictures of docs/observing.md, made from the default system as it runs now
(compositions/nao_sim.yaml): rtcf-graph's drawing (rtcf-graph-default.png) and the live web
view in headless Chromium with Kinematics0 selected and DCM0.q plotted (web_view.png).

Starts its own naming service on a free port and the system with its web view on another,
and stops both at the end. Needs matplotlib (the PNG) and Debian's chromium and
chromium-driver with selenium (scripts/test installs them). Options: --out DIR (default
docs/img)."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def wait(what: str, check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except Exception:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"observing_pictures: timed out waiting for {what}")
        time.sleep(0.3)


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/observing_pictures",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"),
                    help="the folder for the two PNGs (default docs/img)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    from rtcf.corba.naming import ensure_naming_service, free_port
    ns = ensure_naming_service("127.0.0.1", free_port(), timeout=15)
    web_port = free_port()
    work = tempfile.mkdtemp(prefix="rtcf-pictures-")
    log = open(Path(work) / "manager.log", "wb")
    mgr = subprocess.Popen(
        [sys.executable, "-m", "rtcf.manager", str(ROOT / "compositions" / "nao_sim.yaml"),
         "--quiet", "-o", f"corba.nameservers:localhost:{ns.port}",
         "-o", "rtcf.web.enable:YES", "-o", f"rtcf.web.port:{web_port}"],
        cwd=work, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    driver = None
    try:
        url = f"http://127.0.0.1:{web_port}/"

        def system_up() -> bool:
            with urllib.request.urlopen(url + "api/system", timeout=2) as r:
                import json
                names = {c["name"] for c in json.loads(r.read())["components"]}
                return {"DCM0", "Kinematics0", "SequencePlayer0"} <= names
        wait("the system and its web view", system_up)
        graph = out / "rtcf-graph-default.png"
        done = subprocess.run([str(BIN / "rtcf-graph"), "-n", f"localhost:{ns.port}", "-o",
                               str(graph)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"observing_pictures: rtcf-graph failed: {done.stderr.strip()}")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which("chromium")
        for flag in ("--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--no-first-run",
                     "--window-size=1400,1050", f"--user-data-dir={work}/chromium"):
            opts.add_argument(flag)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
        driver.get(url)
        js = driver.execute_script
        wait("the graph on the page", lambda: js(
            "return window.rtcf && rtcf.cy && rtcf.cy.nodes().length > 4"))

        def click(css: str) -> bool:
            return js("const e = document.querySelector(arguments[0]); if (e) e.click();"
                      " return !!e", css)
        wait("DCM0 in the table", lambda: click("#components tr[data-name='DCM0']"))
        wait("DCM0.q's plot button", lambda: click("#details button.plot[data-port='q']"))
        wait("Kinematics0 in the table",
             lambda: click("#components tr[data-name='Kinematics0']"))
        wait("the plot", lambda: js(
            "return Object.values(rtcf.plots).some(p => p.count > 200)"))
        js("window.scrollTo(0, 0)")
        driver.save_screenshot(str(out / "web_view.png"))
        print(f"observing_pictures: wrote {graph} and {out / 'web_view.png'}")
    finally:
        if driver is not None:
            driver.quit()
        if mgr.poll() is None:
            os.killpg(mgr.pid, signal.SIGTERM)
            try:
                mgr.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(mgr.pid, signal.SIGKILL)
                mgr.wait(5)
        log.close()
        ns.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
