"""A run directory under a prefix of an object store: ``s3://``, ``gs://``, ``az://`` (obstore).

Every process (client and workers) builds its own store from the URL and its
own environment, the way each ecosystem expects: for S3 the ``AWS_*``
variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``,
``AWS_ENDPOINT_URL`` for an S3-compatible server), or ``AWS_PROFILE`` through
boto3 when it is installed; for Google and Azure their ``GOOGLE_*`` and
``AZURE_*`` variables. Only the URL travels in task graphs; nothing here
prints or stores a credential.

The primitives and what they stand on:

- ``create``: PUT with ``If-None-Match: *`` (S3 since 2024 and S3-compatible
  servers that follow it; GCS and Azure preconditions). A store that ignores the
  header would let a record be overwritten, so :meth:`ObjectLocation.check_conditional`
  refuses such a store before a run starts.
- ``replace``: PUT with ``If-Match: <ETag>``: the run's epoch fence and the lease.
- ``lock``: a lease object, created conditionally and renewed every third of
  its life by a thread of the client (``EPCG_LEASE_SECONDS``, default 30). A
  client killed with SIGKILL cannot release it: the next client waits until it
  expires (the message says when), unless the lease names a process of the
  next client's own machine that is gone (its pid free or another process's
  now, told apart by the start time the lease records), or the next client's
  own process whose release failed: those are taken over at once. Expiry is judged by
  wall clocks, so clients whose clocks disagree by more than a lease could
  both believe they hold it; the epoch fence still keeps a stale client's
  tasks from writing records.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from epcg.runtime import processes
from epcg.runtime.errors import Conflict, MissingBucket, PermissionDenied, StorageFault, Unreachable, UserError, one_line
from epcg.runtime.rundir.base import LOCK_KEY, PROBE_KEY, Location

if TYPE_CHECKING:
    from obstore.store import ClientConfig
    from zarr.abc.store import ByteRequest
    from zarr.core.buffer import Buffer, BufferPrototype

SCHEMES = ("s3", "gs", "az", "abfs", "abfss")
"""URL schemes that are object stores (``file://`` is a POSIX path)."""
LEASE_SECONDS = float(os.environ.get("EPCG_LEASE_SECONDS", "30"))
"""Life of the run's lease on an object store; the holder renews it every third of that."""


class Counters:
    """Requests and bytes this process sent to object stores (for task records, plans and benchmarks)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = self.bytes_read = self.bytes_written = 0

    def add(self, requests: int = 1, read: int = 0, written: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.bytes_read += read
            self.bytes_written += written

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {"requests": self.requests, "bytes_read": self.bytes_read, "bytes_written": self.bytes_written}


IO = Counters()


def _error_text(exc: BaseException) -> str:
    """One line of an obstore error, without the server's body, with the HTTP status it answered (a server that
    is not an S3 endpoint answers with a web page)."""
    text = one_line(exc)
    status = re.search(r"non-2xx status code: (\d{3}[A-Za-z ]*)", text)
    for marker in ("<?xml", "Server returned", " - "):
        cut = text.find(marker)
        if cut > 0:
            text = text[:cut]
    text = re.sub(r" in [\d.]+m?s$", "", text.strip(" :-")) or type(exc).__name__
    if status:
        text += f": the server answered HTTP {status.group(1).strip()}"
        if "<?xml" not in str(exc) and os.environ.get("AWS_ENDPOINT_URL"):
            text += f" and no S3 error (is {os.environ['AWS_ENDPOINT_URL']} an S3 endpoint?)"
    return text


def _cause(exc: BaseException) -> tuple[type[StorageFault] | None, str]:
    """The fault class of an obstore error and its words (None: not one the user must act on; a retry may help)."""
    raw = one_line(exc)
    if "NoSuchBucket" in raw:
        return MissingBucket, "its bucket does not exist"
    if any(s in raw for s in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403 Forbidden",
                              "InvalidClientTokenId", "ExpiredToken")):
        return PermissionDenied, ("access denied (check the credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY "
                                  "or AWS_PROFILE)")
    if any(s in raw for s in ("Connection refused", "error sending request", "dns error", "client error (Connect)",
                              "timed out", "Operation timed out", "connection closed", "Connection reset")):
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or "the default endpoint"
        return Unreachable, f"cannot reach {endpoint}"
    if "credential" in raw.lower():
        return PermissionDenied, "no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
    return None, _error_text(exc)


def _store(url: str) -> Any:
    """An obstore store for ``url`` configured from this process's environment."""
    try:
        from obstore.store import from_url
    except ImportError:
        raise UserError(f"{url}: run directories on object stores need obstore: pip install 'epcg[objstore]'") from None

    options: ClientConfig = {"timeout": "60s", "connect_timeout": "5s"}
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or ""
    kwargs: dict[str, Any] = {}
    if url.startswith("s3://"):
        if endpoint.startswith("http://"):
            options["allow_http"] = True  # the user named a plain-HTTP endpoint (a server on the LAN or a test)
        if os.environ.get("AWS_PROFILE") and not os.environ.get("AWS_ACCESS_KEY_ID"):
            with contextlib.suppress(ImportError):
                from obstore.auth.boto3 import Boto3CredentialProvider

                kwargs["credential_provider"] = Boto3CredentialProvider()
        if not os.environ.get("AWS_REGION") and not os.environ.get("AWS_DEFAULT_REGION"):
            kwargs["region"] = "us-east-1"
    try:
        return from_url(url, client_options=options,
                        retry_config={"max_retries": 3, "retry_timeout": timedelta(seconds=20)}, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a URL or configuration obstore refuses: one line
        raise UserError(f"{url}: {_error_text(exc)}") from None


class ObjectLocation(Location):
    """Keys are objects under the URL's prefix; every request goes straight to the store."""

    metered = True

    def __init__(self, url: str) -> None:
        self.where = url.rstrip("/")
        self.store = _store(self.where)

    def __repr__(self) -> str:
        return f"ObjectLocation({self.where!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ObjectLocation, (self.where,))  # rebuilt from the URL and the receiving process's environment

    # -- errors ---------------------------------------------------------------

    def _fail(self, exc: BaseException, key: str) -> BaseException:
        """An obstore error as the StorageFault of its cause (the user must act: one line, its own exit status) or
        an OSError (a retry may help)."""
        fault, reason = _cause(exc)
        if fault is not None:
            return fault(f"{self.where}: {reason}")
        return OSError(f"{self.describe(key)}: {reason}")

    # -- Location ------------------------------------------------------------

    def read(self, key: str) -> bytes | None:
        found = self.read_versioned(key)
        return None if found is None else found[0]

    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        import obstore as obs

        try:
            result = obs.get(self.store, key)
            data = bytes(result.bytes())
        except FileNotFoundError as exc:
            IO.add()
            if "NoSuchBucket" in str(exc):
                raise self._fail(exc, key) from None
            return None
        except Exception as exc:  # noqa: BLE001 - translated to one line
            raise self._fail(exc, key) from None
        IO.add(read=len(data))
        return data, f"{result.meta['e_tag'] or ''}\n{result.meta.get('version') or ''}"

    def exists(self, key: str) -> bool:
        """A HEAD request: the object's bytes are not fetched."""
        import obstore as obs

        IO.add()
        try:
            obs.head(self.store, key)
        except FileNotFoundError as exc:
            if "NoSuchBucket" in str(exc):
                raise self._fail(exc, key) from None
            return False
        except Exception as exc:  # noqa: BLE001 - translated to one line
            raise self._fail(exc, key) from None
        return True

    def write(self, key: str, data: bytes) -> None:
        self._put(key, data, "overwrite")

    def create(self, key: str, data: bytes) -> bool:
        return self._put(key, data, "create")

    def replace(self, key: str, data: bytes, version: str) -> bool:
        """PUT with ``If-Match`` on the ETag (and the object generation, which GCS compares)."""
        e_tag, _, generation = version.partition("\n")
        mode = {"e_tag": e_tag}
        if generation:
            mode["version"] = generation
        return self._put(key, data, mode)

    def _put(self, key: str, data: bytes, mode: Any) -> bool:
        import obstore as obs
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        IO.add(written=len(data))
        try:
            obs.put(self.store, key, data, mode=mode)
        except (AlreadyExistsError, PreconditionError):
            return False
        except FileNotFoundError as exc:
            if isinstance(mode, dict) and "NoSuchBucket" not in str(exc):
                return False  # If-Match on an object that is gone
            raise self._fail(exc, key) from None
        except Exception as exc:  # noqa: BLE001 - translated to one line
            raise self._fail(exc, key) from None
        return True

    def delete(self, key: str) -> None:
        import obstore as obs

        IO.add()
        try:
            obs.delete(self.store, key)
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001 - translated to one line
            raise self._fail(exc, key) from None

    def list(self, prefix: str = "") -> list[str]:
        import obstore as obs

        out: list[str] = []
        try:
            for batch in obs.list(self.store, prefix=prefix.rstrip("/") or None):
                IO.add()
                out.extend(str(meta["path"]) for meta in batch)
        except Exception as exc:  # noqa: BLE001 - translated to one line
            raise self._fail(exc, prefix) from None
        return sorted(out)

    def sync(self, keys: Iterable[str]) -> None:
        """Nothing to do: a PUT has returned only once the object is durable."""

    def zarr_store(self, key: str) -> Any:
        from zarr.storage import ObjectStore

        return CountingStore(ObjectStore(_store(f"{self.where}/{key}")), self.where)

    @contextlib.contextmanager
    def lock(self, owner: str) -> Iterator[None]:
        """Hold the run's lease object while the block runs, renewing it from a thread."""
        version = self._take_lease(owner)
        stop = threading.Event()
        state = {"version": version}

        def renew() -> None:
            while not stop.wait(LEASE_SECONDS / 3):
                body = self._lease_body(owner)
                with contextlib.suppress(Exception):
                    if self.replace(LOCK_KEY, body, state["version"]):
                        state["version"] = self._lock_version()
                    else:
                        return  # taken over after it expired: the epoch fence stops this client's records

        thread = threading.Thread(target=renew, name="epcg-lease", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            with _HELD_LOCK:
                _HELD[self.where] -= 1
            with contextlib.suppress(OSError, UserError):  # unreachable now: the lease expires by itself
                current = self.read_versioned(LOCK_KEY)
                if current is not None and current[1] == state["version"]:
                    self.delete(LOCK_KEY)

    def _lease_body(self, owner: str) -> bytes:
        me = processes.identity()
        return json.dumps({"owner": owner, "expires": round(time.time() + LEASE_SECONDS, 3),
                           "host": me["node"], "pid": me["pid"], "token": me["token"]}).encode()

    def _take_lease(self, owner: str) -> str:
        body = self._lease_body(owner)
        if self.create(LOCK_KEY, body):
            return self._held(self._lock_version())
        current = self.read_versioned(LOCK_KEY)
        if current is not None:
            if _held_by_a_live_client(current[0], self.where):
                raise Conflict(f"run {self.where} is in use by another epcg client {describe_lease(current[0])}")
            if self.replace(LOCK_KEY, body, current[1]):
                return self._held(self._lock_version())
        elif self.create(LOCK_KEY, body):
            return self._held(self._lock_version())
        raise Conflict(f"run {self.where} is in use by another epcg client (it took the lease just now)")

    def _lock_version(self) -> str:
        """The version of the lock object this client has just written."""
        found = self.read_versioned(LOCK_KEY)
        assert found is not None, "the lock object this client has just written is gone"
        return found[1]

    def _held(self, version: str) -> str:
        with _HELD_LOCK:
            _HELD[self.where] += 1
        return version

    def holder(self) -> str | None:
        current = self.read(LOCK_KEY)
        if current is None or not _held_by_a_live_client(current, self.where):
            return None
        return describe_lease(current)

    def is_locked(self) -> bool:
        current = self.read(LOCK_KEY)
        return current is not None and _held_by_a_live_client(current, self.where)

    def check(self) -> None:
        """List one key under the prefix: a missing bucket, bad credentials or a dead endpoint end here."""
        import obstore as obs

        try:
            IO.add()
            obs.list(self.store, prefix=None, chunk_size=1).__next__()
        except StopIteration:
            pass
        except Exception as exc:  # noqa: BLE001 - translated to one line
            fault, reason = _cause(exc)
            raise (fault or StorageFault)(f"{self.where}: {reason}") from None

    def check_conditional(self) -> None:
        """Refuse a store that does not honour ``If-None-Match: *``: records could then be overwritten."""
        probe = f"{PROBE_KEY}-{os.getpid()}-{time.time_ns()}"
        try:
            self.create(probe, b"1")
            refused = not self.create(probe, b"2")
        finally:
            self.delete(probe)
        if not refused:
            raise UserError(f"{self.where}: this object store overwrote an object despite If-None-Match: *; "
                            "epcg needs conditional writes to keep records and the run's fence safe")

    def scratch(self, name: str) -> Path:
        tag = hashlib.sha256(self.where.encode()).hexdigest()[:16]
        path = Path(tempfile.gettempdir()) / "epcg-scratch" / tag / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def drop_scratch(self, name: str) -> None:
        shutil.rmtree(self.scratch(name), ignore_errors=True)

    def local_path(self, key: str = "") -> Path | None:
        return None

    def io(self) -> dict[str, int] | None:
        return IO.snapshot()

    def local_copy(self, prefix: str) -> Path:
        target = self.scratch("copy") / prefix.rstrip("/")
        for key in self.list(prefix):
            path = self.scratch("copy") / key
            data = self.read(key)
            if data is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        return target

    def publish(self, prefix: str, directory: Path) -> builtins.list[str]:
        keys = []
        for path in sorted(Path(directory).rglob("*")):
            if path.is_file():
                key = f"{prefix.rstrip('/')}/{path.relative_to(directory)}"
                self.write(key, path.read_bytes())
                keys.append(key)
        return keys

    def free_bytes(self) -> int | None:
        return None


def describe_lease(data: bytes) -> str:
    """Who holds a lease and until when: a client killed with SIGKILL cannot release its lease, so the next one
    is told when it lapses (``EPCG_LEASE_SECONDS`` after its last renewal)."""
    lease = _parse_lease(data)
    left = max(0.0, lease["expires"] - time.time())
    until = time.strftime("%H:%M:%S UTC", time.gmtime(lease["expires"]))
    return (f"({lease['owner']}); wait for it to finish or stop it; if it was killed, its lease expires in "
            f"{left:.0f} s (at {until}, unless a live client renews it)")


def _parse_lease(data: bytes) -> dict[str, Any]:
    from epcg.runtime.schemas import Lease, Malformed, loads

    try:
        lease = loads(data, Lease, "lease")
    except Malformed:
        lease = {}
    return {"owner": lease.get("owner", "unknown"), "expires": float(lease.get("expires", 0)),
            "host": lease.get("host"), "pid": lease.get("pid"), "token": lease.get("token")}


_HELD: collections.Counter[str] = collections.Counter()
"""Run locations whose lease this process holds now (a lease naming this process and not here was left by a
release that failed)."""
_HELD_LOCK = threading.Lock()


def _held_by_a_live_client(data: bytes, where: str) -> bool:
    """A lease that has not expired, unless it names a process of this machine that is gone (its pid free or
    given to another process: :func:`epcg.runtime.processes.state`), or this process while it does not hold the
    lease (both can only have failed to release it)."""
    lease = _parse_lease(data)
    if lease["expires"] <= time.time():
        return False
    if lease["host"] != socket.gethostname() or not isinstance(lease["token"], str):
        return True  # another machine's process, or a lease that cannot prove which process: only expiry tells
    if lease["pid"] == os.getpid():
        with _HELD_LOCK:
            return _HELD[where] > 0
    return processes.state({"node": lease["host"], "pid": lease["pid"], "token": lease["token"]}) == "alive"


def _counting_store_class() -> type:
    from zarr.abc.store import Store
    from zarr.storage import WrapperStore

    class _CountingStore(WrapperStore[Store]):
        """A Zarr store that counts its requests and bytes in :data:`IO` (what plans and benchmarks report), and
        names a failed request for its cause (the StorageFault of :func:`_cause`), as every other request does."""

        _where = ""

        def _fault(self, exc: BaseException) -> BaseException:
            fault, reason = _cause(exc)
            return exc if fault is None else fault(f"{self._where}: {reason}")

        def _check_missing(self, key: str) -> None:
            """Zarr reads a missing object as an absent key: where that is an array's metadata, ask whether the
            bucket itself is gone or the store unreachable (one more request, only on this path)."""
            if key.endswith("zarr.json") and self._where:
                ObjectLocation(self._where).check()

        async def get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
                      ) -> Buffer | None:
            try:
                buffer = await self._store.get(key, prototype, byte_range)
            except Exception as exc:  # noqa: BLE001 - named for its cause
                raise self._fault(exc) from None
            if buffer is None:
                self._check_missing(key)
            IO.add(read=len(buffer) if buffer is not None else 0)
            return buffer

        async def get_partial_values(self, prototype: BufferPrototype,
                                     key_ranges: Iterable[tuple[str, ByteRequest | None]]) -> list[Buffer | None]:
            key_ranges = list(key_ranges)
            try:
                out = await self._store.get_partial_values(prototype, key_ranges)
            except Exception as exc:  # noqa: BLE001 - named for its cause
                raise self._fault(exc) from None
            IO.add(len(key_ranges), read=sum(len(b) for b in out if b is not None))
            return out

        async def set(self, key: str, value: Buffer) -> None:
            IO.add(written=len(value))
            try:
                await self._store.set(key, value)
            except Exception as exc:  # noqa: BLE001 - named for its cause
                raise self._fault(exc) from None

        async def delete(self, key: str) -> None:
            IO.add()
            try:
                await self._store.delete(key)
            except Exception as exc:  # noqa: BLE001 - named for its cause
                raise self._fault(exc) from None

        async def exists(self, key: str) -> bool:
            IO.add()
            try:
                return await self._store.exists(key)
            except Exception as exc:  # noqa: BLE001 - named for its cause
                raise self._fault(exc) from None

    return _CountingStore


def CountingStore(store: Any, where: str = "") -> Any:  # noqa: N802 - a class built on first use (Zarr is lazy)
    """``store`` counted in :data:`IO`; ``where``: the run's URL, named in a fault's message."""
    global _COUNTING
    if _COUNTING is None:
        _COUNTING = _counting_store_class()
    wrapped = _COUNTING(store)
    wrapped._where = where
    return wrapped


_COUNTING: type | None = None
