"""Headless Chromium driven through its DevTools protocol (a websocket), to load a served page, click, read the
DOM and take screenshots: Debian's `chromium` package and `websocket-client`, nothing downloaded."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--remote-debugging-port=0", "--remote-allow-origins=*")


def find_chromium() -> str | None:
    """The browser's path, or None when none is installed."""
    return next((path for name in CHROMIUM if (path := shutil.which(name))), None)


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout_s: float = 60) -> None:
        self.width, self.height, self.timeout_s = width, height, timeout_s
        self._next_id = 0

    def __enter__(self) -> Browser:
        import websocket

        executable = find_chromium()
        if executable is None:
            raise RuntimeError("no chromium installed (make install installs Debian's package)")
        self.profile = Path(tempfile.mkdtemp(prefix="mmb-chromium-"))
        self.process = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={self.profile}",
                                         f"--window-size={self.width},{self.height}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout_s
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.__exit__()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            pages = [t for t in json.load(response) if t["type"] == "page"]
        self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=self.timeout_s)
        self.send("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height, deviceScaleFactor=1,
                  mobile=False)
        return self

    def __exit__(self, *exc: object) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method: str, **params: Any) -> dict:
        """One DevTools command; its result (events arriving meanwhile are skipped)."""
        self._next_id += 1
        self.socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (exceptions raised here)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('text')} "
                               f"{result['exceptionDetails'].get('exception', {}).get('description', '')}")
        return result["result"].get("value")

    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === 'true'") -> None:
        """Navigate and wait until `ready` holds."""
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout_s
        while not self.evaluate(f"Boolean({ready})"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: not ready after {self.timeout_s} s")
            time.sleep(0.1)

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """A PNG of the page (the whole page by default)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            height = self.evaluate("document.documentElement.scrollHeight")
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", **params)["data"]))
        return path
