"""What a stage's tasks read of earlier stages, per host, against the plan: read amplification from the records.

Every task's record has ``read_bytes``, the uncompressed bytes it read from the
store (0 for a task whose worker held them already) and ``worker``, the Dask
address it ran on. A stage's ``source_bytes`` is the data it reads from, and
``read_bytes`` what its tasks are planned to read in all (a sliced Fling! layer:
each read group once). ``epcg status`` and a kind's report print these figures.

>>> from epcg.runtime.plan import Stage, Task
>>> stage = Stage("k", (Task("k", 0, 0, 3), Task("k", 1, 3, 4)), read_bytes=300, source_bytes=100)
>>> records = {"k/00000": {"start": 0, "stop": 3, "read_bytes": 240, "worker": "tcp://10.0.0.1:1"},
...            "k/00001": {"start": 3, "stop": 4, "read_bytes": 60, "worker": "tcp://10.0.0.2:1"}}
>>> print(read_line(stage_reads(stage, records)))
read 300 B, 3.00× its source (plan 3.00×); by host: 10.0.0.1 240 B, 10.0.0.2 60 B (plan 150 B each)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from epcg.runtime.estimate import size
from epcg.runtime.plan import Stage


def host_of(address: str) -> str:
    """The host part of a Dask address.

    >>> host_of("tcp://198.18.0.3:40123"), host_of("tls://[::1]:8786")
    ('198.18.0.3', '::1')
    """
    return urlsplit(address).hostname or address


@dataclass(frozen=True)
class StageReads:
    """A stage's reads so far: bytes in all and per host, and the plan's figures (``Stage.read_bytes``,
    ``Stage.source_bytes``)."""

    read: int
    by_host: dict[str, int]
    planned: int | None
    source: int

    @property
    def amplification(self) -> float | None:
        """Bytes read over the bytes read from (None if the stage reads nothing)."""
        return self.read / self.source if self.source else None

    def per_host(self) -> int | None:
        """The plan's figure per host: the stage's planned reads shared equally by the hosts that ran its tasks
        (hosts take the next run of tasks as they free up, so they share the reading as they share the time; a
        stage of few runs can split unevenly). None: not planned."""
        return None if self.planned is None or not self.by_host else round(self.planned / len(self.by_host))


def stage_reads(stage: Stage, records: Mapping[str, Mapping[str, Any]]) -> StageReads:
    """The reads of ``stage``'s finished tasks (``records`` by task id; a record without ``worker`` ran in the client
    process, counted as host ``local``)."""
    read: dict[str, int] = {}
    for task in stage.tasks:
        record = records.get(task.id)
        if record is not None:
            host = host_of(record["worker"]) if record.get("worker") else "local"
            read[host] = read.get(host, 0) + record.get("read_bytes", 0)
    return StageReads(sum(read.values()), dict(sorted(read.items())), stage.read_bytes, stage.source_bytes)


def read_line(reads: StageReads) -> str:
    """One line: bytes read, amplification against the plan's, and per host against the plan's figure per host."""
    head = f"read {size(reads.read)}"
    if reads.amplification is not None:
        plan = f" (plan {reads.planned / reads.source:.2f}×)" if reads.planned is not None else ""
        head += f", {reads.amplification:.2f}× its source{plan}"
    hosts = ", ".join(f"{host} {size(n)}" for host, n in reads.by_host.items())
    if reads.per_host() is not None:
        hosts += f" (plan {size(reads.per_host())} each)"
    return f"{head}; by host: {hosts}"
