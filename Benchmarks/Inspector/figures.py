#!/usr/bin/env python3
"""The inspector's figures (issue 38), measured on a real daemon and Debian's chromium:

1. First render with a long journal: a journal of CHANGES changes, written in the journal's own
   schema (a snapshot every 10,000, each change with its cause, as the daemon writes them), a
   daemon started on it, and the page loaded LOADS times in headless chromium: from the
   navigation's start to the timeline's rows being in (the page's `timeline-rows` mark). The
   page must page: its first read is 100 rows, whatever the journal holds.
2. The event stream under load: RATE changes/s for SECONDS, first with no viewer, then with
   VIEWERS reading `/inspector/events` and STALLED viewers that read nothing (the daemon closes
   those after its write timeout); the daemon's RSS before and after each run, the growth the
   viewers add, and the bound the code sets (each stream holds one page of changes: its size
   is read from Sources/Inspector/ChangeStreams.swift).

    figures.py DAEMON [--changes N] [--loads N] [--rate N] [--seconds N] [--viewers N] [--stalled N]

Needs Selenium (the test virtual environment's) and Debian's chromium and chromium-driver.
`make bench-inspector` runs it at full size on a release build.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Benchmarks" / "EndToEnd"))
from recovery import call  # noqa: E402

INCR = {"counter": {"incrTapped": {}}}
STORE = "io.switchyard.Store"


def code_constant(path, name):
    """An integer the code declares as `static var NAME: Int { 256 << 10 }` (or a literal)."""
    text = (ROOT / path).read_text()
    match = re.search(rf"static var {name}: Int {{ ([0-9_]+)(?: << ([0-9]+))? }}", text)
    assert match, f"{name} is not declared in {path}"
    return int(match.group(1).replace("_", "")) << int(match.group(2) or 0)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """A daemon on `state` with its HTTP endpoint, until `stop`."""

    def __init__(self, daemon, state, **environment):
        self.sock = os.path.join(state, "..", os.path.basename(state) + ".sock")
        self.port = free_port()
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHYARD_")}
        env.update(SWITCHYARD_LOG_LEVEL="warning", SWITCHYARD_HTTP_LISTEN=f"127.0.0.1:{self.port}",
                   SWITCHYARD_JOURNAL_RETENTION="100000000", **environment)
        began = time.monotonic()
        self.process = subprocess.Popen([daemon, "--socket", self.sock, "--state-directory", state], env=env)
        while True:
            try:
                status = call(self.sock, f"{STORE}.Status")["parameters"]
                break
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the daemon exited with {self.process.returncode}")
                if time.monotonic() - began > 600:
                    raise RuntimeError("the daemon did not start")
                time.sleep(0.01)
        self.started_ms = (time.monotonic() - began) * 1000
        self.inspector = status["inspector"]
        self.token = urllib.parse.parse_qs(urllib.parse.urlparse(self.inspector).query)["token"][0]

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def stop(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def write_journal(daemon, state, changes):
    """`changes` increments of /primes/count, each with its cause and reduction time, and a
    snapshot every 10,000, after the first snapshot a start of the daemon wrote."""
    Served(daemon, state).stop()
    db = sqlite3.connect(os.path.join(state, "journal.sqlite"))
    initial = json.loads(db.execute("SELECT state FROM snapshot WHERE seq = 0").fetchone()[0])
    versions = db.execute("SELECT versions FROM version_mark ORDER BY seq DESC LIMIT 1").fetchone()
    action = json.dumps(INCR, separators=(",", ":")).encode()
    now = time.time() - changes / 10_000
    with db:
        rows = ((seq, "primes", "request", action, 0, 4242,
                 json.dumps([{"op": "replace", "path": "/primes/count", "value": seq}], separators=(",", ":")).encode(),
                 now + seq / 10_000, 2_000 + seq % 3_000)
                for seq in range(1, changes + 1))
        db.executemany(
            "INSERT INTO change (seq, feature, origin, action, uid, pid, patch, time, reduceNanoseconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows)
        for seq in range(10_000, changes + 1, 10_000):
            initial["primes"]["count"] = seq
            db.execute("INSERT INTO snapshot (seq, state) VALUES (?, ?)", (seq, json.dumps(initial, separators=(",", ":")).encode()))
            if versions:
                db.execute("INSERT OR REPLACE INTO version_mark (seq, versions) VALUES (?, ?)", (seq, versions[0]))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(os.path.getsize(os.path.join(state, f)) for f in os.listdir(state) if f.startswith("journal.sqlite"))


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=options)


def first_render(daemon, folder, changes, loads):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    state = os.path.join(folder, "long")
    began = time.monotonic()
    size = write_journal(daemon, state, changes)
    written = time.monotonic() - began
    served = Served(daemon, state)
    session = browser()
    try:
        renders = []
        for _ in range(loads):
            session.get("about:blank")
            session.get(served.inspector)
            WebDriverWait(session, 60).until(
                lambda b: b.execute_script("return performance.getEntriesByName('timeline-rows').length") > 0)
            renders.append(session.execute_script("return performance.getEntriesByName('timeline-rows')[0].startTime"))
            rows = session.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")
            assert rows and rows[0].get_attribute("data-seq") == str(changes), "the newest change is not first"
            assert len(rows) == 100, f"the first render holds {len(rows)} rows, not one page of 100"
        # A page from the middle of the journal, as paging back reads it.
        middle = []
        for _ in range(5):
            started = time.monotonic()
            with urllib.request.urlopen(f"http://127.0.0.1:{served.port}/inspector/api/journal?before={changes // 2}&limit=100&token={served.token}") as r:
                body = r.read()
            middle.append((time.monotonic() - started) * 1000)
        page_bytes = len(body)
    finally:
        session.quit()
        served.stop()
        shutil.rmtree(state, ignore_errors=True)
    print(f"first render: a journal of {changes} changes ({size / 1e6:.1f} MB, written in {written:.1f} s; the daemon served after {served.started_ms:.0f} ms)")
    print(f"  navigation start -> timeline rows: first (cold) {renders[0]:.0f} ms, median {statistics.median(renders):.0f} ms, "
          f"max {max(renders):.0f} ms of {loads} loads (goal < 1000 ms); 100 rows shown")
    print(f"  a page from the middle (before={changes // 2}, 100 rows, {page_bytes} bytes): median {statistics.median(middle):.1f} ms")
    return renders


class Viewer(threading.Thread):
    """One `/inspector/events` reader, from its own loopback address; `stalled` reads nothing."""

    def __init__(self, served, source, stalled):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        if stalled:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.bind((source, 0))
        self.sock.connect(("127.0.0.1", served.port))
        self.sock.sendall(f"GET /inspector/events?token={served.token} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
        self.stalled = stalled
        self.last = 0
        self.events = 0
        self.closed = False

    def run(self):
        if self.stalled:
            return
        pending = b""
        try:
            while chunk := self.sock.recv(1 << 16):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.startswith(b"id: "):
                        self.last = int(line[4:])
                        self.events += 1
        except OSError:
            pass
        self.closed = True


def stream_under_load(daemon, folder, rate, seconds, viewers, stalled):
    limit = code_constant("Sources/Inspector/Inspector.swift", "streamLimit")
    page_changes = code_constant("Sources/Inspector/ChangeStreams.swift", "pageSize")
    page_bytes = code_constant("Sources/Inspector/ChangeStreams.swift", "pageBytes")
    assert viewers + stalled <= limit, f"at most {limit} event streams are served"
    results = {}
    for run, (reading, idle) in (("without viewers", (0, 0)), ("with viewers", (viewers, stalled))):
        state = os.path.join(folder, run.replace(" ", "-"))
        served = Served(daemon, state, SWITCHYARD_FEATURES_PRIMES_ISOLATION="actor")
        try:
            with socket.socket(socket.AF_UNIX) as load:
                load.connect(served.sock)
                load.settimeout(30)

                def batch(count):
                    message = json.dumps({"method": f"{STORE}.SendBatch", "parameters": {"actions": [INCR] * count}}).encode() + b"\0"
                    load.sendall(message)
                    data = b""
                    while not data.endswith(b"\0"):
                        data += load.recv(1 << 16)
                    return json.loads(data[:-1])["parameters"]["seq"]

                batch(1000)  # warm: the journal's first pages, the loop's buffers
                readers = [Viewer(served, f"127.0.5.{1 + i}", i >= reading) for i in range(reading + idle)]
                for reader in readers:
                    reader.start()
                time.sleep(1)
                before = served.rss_kib()
                peak, lag = before, 0
                step = max(1, rate // 100)
                started = time.monotonic()
                sent, seq = 0, 0
                next_sample = started
                while (elapsed := time.monotonic() - started) < seconds:
                    due = int(elapsed * rate) - sent
                    if due >= step:
                        seq = batch(min(due, 10 * step))
                        sent += min(due, 10 * step)
                    else:
                        time.sleep(0.002)
                    if time.monotonic() >= next_sample:
                        peak = max(peak, served.rss_kib())
                        lag = max([lag] + [seq - r.last for r in readers if not r.stalled and r.last])
                        next_sample += 0.25
                achieved = sent / (time.monotonic() - started)
                deadline = time.monotonic() + 15
                while any(not r.stalled and r.last < seq for r in readers) and time.monotonic() < deadline:
                    time.sleep(0.05)
                after = served.rss_kib()
                received = [r.events for r in readers if not r.stalled]
                caught_up = all(r.last == seq for r in readers if not r.stalled)
        finally:
            served.stop()
            shutil.rmtree(state, ignore_errors=True)
        results[run] = (before, peak, after)
        line = f"  {run}: {achieved:.0f} changes/s offered for {seconds} s; RSS before {before / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB, after {after / 1024:.1f} MiB"
        if readers:
            line += (f"; {reading} reading viewers got {min(received)}..{max(received)} events each, "
                     f"{'all caught up' if caught_up else 'NOT all caught up'}, at most {lag} changes behind; {idle} stalled viewers")
        print(line)
    growth = (results["with viewers"][1] - results["with viewers"][0]) - (results["without viewers"][1] - results["without viewers"][0])
    bound = (viewers + stalled) * page_bytes / 1024
    print(f"  the viewers' part of the peak growth: {growth / 1024:.1f} MiB; the code's bound: {viewers + stalled} streams x one page "
          f"({page_changes} changes, {page_bytes >> 10} KiB of journal bytes) = {bound / 1024:.1f} MiB (plus each page's JSON framing)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("daemon")
    parser.add_argument("--changes", type=int, default=1_000_000)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--viewers", type=int, default=6)
    parser.add_argument("--stalled", type=int, default=2)
    arguments = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="switchyard-inspector-figures-")
    try:
        first_render(arguments.daemon, folder, arguments.changes, arguments.loads)
        print(f"event stream: {arguments.rate} changes/s for {arguments.seconds} s")
        stream_under_load(arguments.daemon, folder, arguments.rate, arguments.seconds, arguments.viewers, arguments.stalled)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
