"""Whether a ``tcp://`` address is a Dask scheduler, asked in a few seconds before a client waits on it.

A Dask scheduler speaks first: on every connection it sends its handshake (a framed msgpack map naming its
``compression``, ``python`` and ``pickle-protocol``). A client connecting to anything else (the dashboard's
HTTP port typed for the scheduler's, an SSH daemon) waits for that handshake and retries for minutes without
a word. :func:`check_scheduler` reads the first bytes itself, under one deadline, and says in one line what
answered instead.
"""

from __future__ import annotations

import socket
import time

from epcg.runtime.errors import UserError

HANDSHAKE_SECONDS = 5.0
"""How long a scheduler may take to send its handshake."""
DASK_MARKS = (b"pickle-protocol", b"compression")
"""Keys of the handshake a Dask scheduler sends first."""


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``tcp://host:port`` address (IPv6 in brackets), None for another protocol."""
    if not address.startswith("tcp://"):
        return None
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _printable(data: bytes) -> str:
    """The first line of what a server sent, as text fit for one line of a terminal."""
    line = data.split(b"\n", 1)[0].strip()[:60]
    return "".join(c if c.isprintable() and c.isascii() else "?" for c in line.decode("latin-1"))


def check_scheduler(address: str, seconds: float = HANDSHAKE_SECONDS) -> None:
    """Return if ``address`` answers as a Dask scheduler does (or is not a ``tcp://`` address, which Dask checks
    itself); otherwise a UserError naming what answered: nothing, a refusal, an HTTP server, other bytes."""
    target = _host_port(address)
    if target is None:
        return
    deadline = time.monotonic() + seconds
    try:
        conn = socket.create_connection(target, timeout=seconds)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(f"cannot reach scheduler {address}: {reason}") from None
    received = b""
    with conn:
        try:
            while time.monotonic() < deadline and not any(mark in received for mark in DASK_MARKS):
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = conn.recv(4096)
                if not chunk:
                    break
                received += chunk
        except TimeoutError:
            pass
        except OSError as exc:
            raise UserError(f"cannot reach scheduler {address}: {exc.strerror or type(exc).__name__}") from None
        if any(mark in received for mark in DASK_MARKS):
            return
        what = _silent_server(conn) if not received else f"it sent {_printable(received)!r}"
    raise UserError(f"{address} is not a Dask scheduler: it accepted the connection but sent no Dask handshake "
                    f"within {seconds:g} s ({what}); a scheduler listens on its own port (8786 by default), "
                    "not the dashboard's (8787)")


def _silent_server(conn: socket.socket) -> str:
    """What a server that waits for its client to speak first is, asked as a web browser would ask."""
    try:
        conn.settimeout(2)
        conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
        reply = conn.recv(256)
    except OSError:
        reply = b""
    if reply.startswith(b"HTTP/"):
        return f"an HTTP server answered: {_printable(reply)!r}"
    return "it said nothing" if not reply else f"asked as a web browser would, it sent {_printable(reply)!r}"
