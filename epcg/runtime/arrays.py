"""A run's Zarr arrays (DIR/store.zarr: layers, bitsets, partial results), the log of what a task wrote, and the
check that stored chunks still hold the bytes their records name.

Every array write through :meth:`Arrays.write_array` or :meth:`Arrays.write_slice` is logged in ``written``
(name -> ``[start, stop, digest]``); the task's manifest record keeps that log, so :func:`check_chunks` can
later tell whether the stored bytes are still the ones the task wrote.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from epcg.runtime.allocator import keep_chunk_buffers
from epcg.runtime.errors import PermissionDenied, StorageFault, UserError, one_line
from epcg.runtime.rundir import Location, open_location

if TYPE_CHECKING:
    import zarr
    from zarr.core.array_spec import ArrayConfigParams

__all__ = ["Arrays", "StoreMissing", "CHECK_BATCH", "ZARR", "check_chunks", "digest"]

ZARR = "store.zarr"
WRITE_CONFIG: ArrayConfigParams = {"write_empty_chunks": True}
"""How the run's arrays are written: every chunk stored, all-zero ones too. Zarr would test each chunk against
the fill value to skip those, a comparison of the whole chunk on its one I/O thread that every task's write waits
for, and dearer than storing the few bytes an empty chunk compresses to."""


def digest(data: np.ndarray) -> str:
    """Short BLAKE2b digest of an array's bytes: what ``verify`` compares."""
    return hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16).hexdigest()


class StoreMissing(UserError):
    """The run's Zarr store is gone or unreadable: nothing is recomputed or deleted."""


class Arrays:
    """The run's Zarr arrays at one :class:`~epcg.runtime.rundir.Location`, and what this process wrote and read
    of them (a task's record keeps both); cheap to build, opening nothing until an array is used."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self.written: dict[str, list[Any]] = {}
        """Array name -> ``[start, stop, digest]`` of every write through :meth:`write_array` or
        :meth:`write_slice`: what the task's record vouches for."""
        self.bytes_read = 0
        """Uncompressed bytes of arrays read (:meth:`read_array`, :meth:`read_slice`): what a task read of
        earlier stages, for its record."""
        self._arrays: dict[str, zarr.Array[Any]] = {}

    @cached_property
    def group(self) -> zarr.Group:
        """The run's Zarr group; a missing store is an error, never silently re-created. Every chunk a process reads
        or writes passes through it, so opening it first has the process keep its freed chunk buffers."""
        import zarr

        keep_chunk_buffers()

        where = self.location.describe(ZARR)
        try:
            if not self.location.exists(f"{ZARR}/zarr.json"):  # opening a store for writing would create it
                raise FileNotFoundError(f"no {ZARR}/zarr.json")
            # format 3 named: one read of zarr.json, where an unnamed format also looks for format 2's three files
            return zarr.open_group(self.location.zarr_store(ZARR), mode="r+", zarr_format=3)
        except StorageFault:
            raise
        except UserError as exc:
            raise StoreMissing(f"the store {where} is unreadable ({exc})") from None
        except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError, OSError,
                zarr.errors.BaseZarrError) as exc:
            reason = one_line(exc)[:200] or type(exc).__name__
            raise StoreMissing(f"the store {where} is missing or unreadable ({reason})") from None

    def write_array(self, name: str, data: np.ndarray, chunks: int | None = None) -> None:
        """Store a 1-D array under ``name``, replacing any earlier copy (idempotent)."""
        data = np.ascontiguousarray(data)
        chunk = max(1, min(chunks or len(data) or 1, 1 << 24))
        array = self._arrays[name] = self.group.create_array(
            name, shape=data.shape, dtype=data.dtype, chunks=(chunk,), overwrite=True, config=WRITE_CONFIG
        )
        if data.size:
            array[:] = data
        self.written[name] = [0, len(data), digest(data)]

    def array(self, name: str) -> zarr.Array[Any]:
        """The run's array ``name``, opened once per Arrays: a task writes, syncs and measures it with one read of
        its metadata (each opening is a request on an object store and a trip through Zarr's event loop)."""
        if name not in self._arrays:
            self._arrays[name] = cast("zarr.Array[Any]", self.group[name]).with_config(WRITE_CONFIG)
        return self._arrays[name]

    def write_slice(self, name: str, start: int, data: np.ndarray) -> None:
        """Store ``data`` at ``[start, start+len)`` of an existing array (whole chunks, ideally)."""
        self.array(name)[start:start + len(data)] = data
        self.written[name] = [start, start + len(data), digest(data)]

    def sync_written(self) -> None:
        """Make the chunks (and metadata) of every array this task wrote durable (fsync on a filesystem)."""
        keys: set[str] = set()
        for name, (start, stop, _digest) in self.written.items():
            array = self.array(name)
            base = f"{ZARR}/{name}"
            keys.add(f"{base}/zarr.json")
            size = array.chunks[0]
            for index in range(start // size, (max(stop, start + 1) - 1) // size + 1):
                keys.add(f"{base}/{array.metadata.encode_chunk_key((index,))}")
        if keys:
            self.location.sync(keys)

    def bytes_written(self) -> int:
        """Uncompressed bytes of the arrays this task wrote (what ``epcg plan`` estimates)."""
        return sum((stop - start) * self.array(name).dtype.itemsize for name, (start, stop, _) in self.written.items())

    def read_array(self, name: str) -> np.ndarray:
        return self.read_slice(name, 0, self.array(name).shape[0])

    def read_slice(self, name: str, start: int, stop: int) -> np.ndarray:
        """Elements ``[start, stop)`` of array ``name``, counted in :attr:`bytes_read`."""
        data = np.asarray(self.array(name)[start:stop])
        self.bytes_read += data.nbytes
        return data

    def has_array(self, name: str) -> bool:
        return name in self.group


CHECK_BATCH = 64
"""Most chunks one verification task reads: few enough for progress and balance, enough that a task's
overhead and opening the store are spread over many."""

READ_BYTES = 32 << 20
"""Most bytes one read brings back when adjacent chunks are checked together (Zarr decodes the chunks of one
read concurrently)."""


def check_chunks(run_path: str, records: Sequence[dict[str, Any]]) -> list[bool]:
    """For each of ``records``: True if every array range it names still has the digest it was written with.

    The store is opened once for all of them (``verify`` sends chunks in
    batches), and adjacent ranges of one array are read together, up to
    :data:`READ_BYTES`; a read that fails is repeated range by range, so one
    damaged chunk does not condemn its neighbours. Raises StoreMissing if the
    store itself cannot be opened (that is not damage of one chunk). A chunk
    that cannot be read (a damaged compressed block, a missing array) counts
    as damaged.
    """
    group = Arrays(open_location(run_path)).group
    intact = [True] * len(records)
    ranges: dict[str, list[tuple[int, int, str, int]]] = {}
    for i, record in enumerate(records):
        for name, (start, stop, expected) in record.get("data", {}).items():
            ranges.setdefault(name, []).append((start, stop, expected, i))
    for name, entries in ranges.items():
        array = _read_back(run_path, group.__getitem__, name)
        if array is None:
            for *_, i in entries:
                intact[i] = False
            continue
        for together in _adjacent(sorted(entries), max(1, READ_BYTES // array.dtype.itemsize)):
            first = together[0][0]
            values = _read_back(run_path, _values, array, first, together[-1][1])
            for start, stop, expected, i in together:
                if values is None and len(together) > 1:
                    alone = _read_back(run_path, _values, array, start, stop)
                    ok = alone is not None and digest(alone) == expected
                else:
                    ok = values is not None and digest(values[start - first:stop - first]) == expected
                intact[i] = intact[i] and ok
    return intact


def _adjacent(entries: list[tuple[int, int, str, int]], most: int) -> Iterator[list[tuple[int, int, str, int]]]:
    """Runs of sorted ranges, each starting where the one before stopped, each run spanning at most ``most``
    array entries (a longer range alone is a run of its own).

    >>> [[entry[:2] for entry in run] for run in _adjacent([(0, 4, "", 0), (4, 8, "", 1), (9, 12, "", 2),
    ...                                                      (12, 20, "", 3)], 8)]
    [[(0, 4), (4, 8)], [(9, 12)], [(12, 20)]]
    """
    together: list[tuple[int, int, str, int]] = []
    for entry in entries:
        if together and (entry[0] != together[-1][1] or entry[1] - together[0][0] > most):
            yield together
            together = []
        together.append(entry)
    if together:
        yield together


def _values(array: Any, start: int, stop: int) -> np.ndarray:
    return np.asarray(array[start:stop])


def _read_back(run_path: str, read: Callable[..., Any], *args: Any) -> Any:
    """``read(*args)``, or None where what it reads is damaged; a failing store raises as itself."""
    try:
        return read(*args)
    except StorageFault:
        raise  # the store failed (unreachable, permission): not damage of a chunk, nothing is forgotten
    except PermissionError as exc:
        raise PermissionDenied(f"{exc.filename or run_path}: permission denied (this user cannot read the "
                               "run's chunks); nothing was checked or forgotten") from None
    except Exception:  # noqa: BLE001 - any failure to read back a chunk is damage of that chunk
        return None
