#!/usr/bin/env python3
"""The HTML report of a profile in headless Chromium: its size, how soon it is
interactive, and how long one step along the timeline takes.

    bench/html_page.py [PROFILE] [--xmem target/release/xmem] [--runs 3]

PROFILE defaults to the shared large profile. Chromium is the system's
(`chromium`), driven through the DevTools protocol over
--remote-debugging-pipe (NUL-ended JSON on file descriptors 3 and 4), with
the flags the browser tests use and a fresh profile. Each run opens the page
anew; the best of the runs is printed.

- interactive: performance.now() when the page's script has finished (the
  selector, every live-set panel, sorting, flame graphs are set up), which is
  measured from the start of navigation, so it includes reading and parsing
  the file and laying out the page up to the script.
- load: the navigation's loadEventEnd, also from its start.
- step: one → along the largest module's timeline, as the page handles the
  key, including the layout it causes.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


class Browser:
    def __init__(self):
        self.profile = tempfile.TemporaryDirectory()
        args = ["chromium", *FLAGS, "--remote-debugging-pipe", "--user-data-dir=" + self.profile.name,
                "--window-size=1100,1400", "about:blank"]
        self.process = subprocess.Popen(
            ["sh", "-c", 'exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null', *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pending = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})
        self.session = self.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.call(domain + ".enable", session=True)

    def receive(self):
        while b"\0" not in self.pending:
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("chromium exited")
            self.pending += chunk
        message, self.pending = self.pending.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.process.stdin.fileno(), json.dumps(message).encode() + b"\0")
        while True:
            answer = self.receive()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def eval(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(json.dumps(result["exceptionDetails"]))
        return result["result"].get("value")

    def open(self, path):
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=True)
        deadline = time.time() + 120
        while self.eval("document.readyState === 'complete' && document.documentElement.dataset.xmemReady") in (None, False):
            if time.time() > deadline:
                raise TimeoutError(path)
            time.sleep(0.01)

    def close(self):
        try:
            self.call("Browser.close")
        except (EOFError, OSError):
            pass
        self.process.wait(timeout=30)


STEP = """(() => {
  const panel = document.querySelector('.live-panel');
  panel.dispatchEvent(new MouseEvent('mouseenter'));
  const start = performance.now();
  document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
  document.body.offsetHeight;
  return performance.now() - start;
})()"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", nargs="?", default="../shared/corpus/large/vm.xplane.pb.gz")
    parser.add_argument("--xmem", default="target/release/xmem")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = tempfile.TemporaryDirectory()
    page = os.path.join(work.name, "report.html")
    started = time.time()
    subprocess.run([args.xmem, "report", args.profile, "--format", "html", "-o", page], check=True)
    written = time.time() - started
    browser = Browser()
    runs = []
    for _ in range(args.runs):
        browser.open(page)
        interactive = float(browser.eval("document.documentElement.dataset.xmemReady"))
        load = browser.eval("performance.getEntriesByType('navigation')[0].loadEventEnd")
        step = browser.eval(STEP)
        requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
        runs.append((interactive, load, step))
    version = browser.call("Browser.getVersion")["product"]
    browser.close()
    others = [url for url in requests if not url.startswith("file://")]
    best = min(runs)
    print(f"input: {args.profile}")
    print(f"page: {os.path.getsize(page)} bytes ({os.path.getsize(page) / 2**20:.2f} MiB), written in {written:.2f} s")
    print(f"{version}, best of {args.runs}: interactive {best[0]:.0f} ms, load {best[1]:.0f} ms, "
          f"one step along the timeline {best[2]:.1f} ms")
    print("every run (interactive, load, step ms):", [tuple(round(v, 1) for v in run) for run in runs])
    print(f"requests other than the page: {len(others)}")
    return 0 if not others else 1


if __name__ == "__main__":
    sys.exit(main())
