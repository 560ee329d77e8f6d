"""The few W3C WebDriver calls the browser tests make, sent to chromedriver.

A client of a dozen HTTP requests (https://www.w3.org/TR/webdriver2/) instead
of selenium and its websocket stack (trio, trio-websocket, wsproto,
websocket-client), which the tests used for nothing else.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

#: The key under which WebDriver returns an element reference.
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(RuntimeError):
    """chromedriver answered a command with an error."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Element:
    """An element found on the page."""

    def __init__(self, driver: Chrome, ref: str) -> None:
        self._driver = driver
        self._path = f"/element/{ref}"

    def click(self) -> None:
        self._driver.command("POST", f"{self._path}/click", {})

    def send_keys(self, text: str) -> None:
        self._driver.command("POST", f"{self._path}/value", {"text": text})

    @property
    def text(self) -> str:
        return str(self._driver.command("GET", f"{self._path}/text"))

    @property
    def screenshot_as_png(self) -> bytes:
        return base64.b64decode(self._driver.command("GET", f"{self._path}/screenshot"))


class Chrome:
    """A chromedriver process and one session of it, on 127.0.0.1."""

    def __init__(self, driver_path: str, binary: str, args: list[str], logging: dict[str, str]):
        self._port = _free_port()
        self._process = subprocess.Popen(
            [driver_path, f"--port={self._port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._base = f"http://127.0.0.1:{self._port}"
        self._session = ""
        try:
            self._wait_ready()
            capabilities = {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": binary, "args": args},
                "goog:loggingPrefs": logging,
            }
            answer = self._send("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
            self._session = f"/session/{answer['sessionId']}"
        except BaseException:
            self._process.kill()
            self._process.wait()
            raise

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self._send("GET", "/status").get("ready"):
                    return
            except (OSError, WebDriverError):
                pass
            if time.monotonic() > deadline or self._process.poll() is not None:
                raise WebDriverError(f"chromedriver did not start on port {self._port}")
            time.sleep(0.05)

    def _send(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self._base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            answer = json.loads(exc.read() or b"{}")
        value = answer.get("value")
        if isinstance(value, dict) and "error" in value:
            raise WebDriverError(f"{method} {path}: {value['error']}: {value.get('message')}")
        return value

    def command(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """A command of this session (``path`` after ``/session/{id}``)."""
        return self._send(method, self._session + path, body)

    def get(self, url: str) -> None:
        self.command("POST", "/url", {"url": url})

    def find_element(self, using: str, value: str) -> Element:
        found = self.command("POST", "/element", {"using": using, "value": value})
        return Element(self, found[ELEMENT])

    def execute_script(self, script: str, *args: Any) -> Any:
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def execute_cdp_cmd(self, cmd: str, params: dict[str, Any]) -> Any:
        """A Chrome DevTools protocol command (chromedriver's own endpoint)."""
        return self.command("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params})

    def get_log(self, kind: str) -> list[dict[str, Any]]:
        """The entries of a log named in ``goog:loggingPrefs`` since the last call."""
        return list(self.command("POST", "/se/log", {"type": kind}))

    def quit(self) -> None:
        try:
            if self._session:
                self.command("DELETE", "")
        finally:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
