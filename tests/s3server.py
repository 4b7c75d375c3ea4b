"""A real S3-compatible server for the tests: moto's standalone server in its own process on 127.0.0.1.

Clients are not patched: the test process, the ``epcg`` subprocesses and
their Dask workers reach it over HTTP through the standard ``AWS_*``
environment variables, as they would reach AWS.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class S3Server:
    """``moto_server`` on a random free port; ``env`` is what a client needs to reach it."""

    def __init__(self, log: Path, auth_after: int | None = None) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        server_env = {**os.environ, "MOTO_PORT": str(self.port)}
        if auth_after is not None:
            server_env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(auth_after)  # then unknown keys are refused
        command = [shutil.which("moto_server") or sys.executable, "-H", "127.0.0.1", "-p", str(self.port)]
        if not shutil.which("moto_server"):
            command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]
        self.log = open(log, "w")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=server_env)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.endpoint, timeout=1).close()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start; see {log}") from None
                time.sleep(0.1)

    @property
    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": self.endpoint}

    def create_bucket(self, name: str | None = None) -> str:
        """A new bucket (a plain PUT: moto accepts it unsigned); returns its name."""
        name = name or f"epcg-{uuid.uuid4().hex[:12]}"
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        urllib.request.urlopen(request, timeout=10).close()
        return name

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
