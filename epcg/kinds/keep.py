"""Score bands a scan job keeps in full (job key ``keep``): their syntax, and storing and reading them back.

A band names the job's score, e.g. Witness ``keep = [{solutions = [2, 3]}]`` or a user's scan
``keep = [{score = 5}]`` (one score), and every rank whose score lies in it (both ends included) is stored,
the ``keep_cap`` lowest ranks per band and row at most. results.json says per row and band how many ranks
matched and whether the cap cut (``"cut": true``), and ``store.zarr/<row>/kept/<band>/`` holds them
(``ranks``, ``scores`` and, where the scan has one, ``payload``). A query of a score inside a band that was not
cut is read from there; any other is recomputed (:meth:`epcg.api.runs.Run.recomputed`).

>>> parse_bands([{"solutions": [2, 3]}, {"solutions": 7}], "solutions")
((2, 3), (7, 7))
>>> band_text((2, 3), "solutions"), band_text((7, 7), "score")
('solutions 2..3', 'score 7')
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pydantic

from epcg.runtime.store import RunDir
from epcg.search.scan import Kept

KEEP_CAP = 100_000
"""Ranks kept per band and row by default (the lowest)."""
MAX_KEPT = 10_000_000
"""The highest ``keep_cap`` a job may set (a recomputed query keeps this many)."""
INLINE_KEPT = 1024
"""A task's band with at most this many ranks keeps them in its record rather than in arrays of its own."""

Band = tuple[float, float]
"""``(low, high)``, both included; integers for a count, floats (``high`` may be infinite) for a ratio."""


def parse_bands(keep: list[dict[str, Any]], score: str, lowest: int | None = None) -> tuple[Band, ...]:
    """The ``(low, high)`` bands of a job's ``keep``; a ValueError naming the entry that is not one, or one that
    reaches below ``lowest`` (the lowest score a kept rank can have) or beyond 64-bit integers."""
    form = f"{{{score} = N}} or {{{score} = [LOW, HIGH]}}"
    bands = []
    for entry in keep:
        if not isinstance(entry, dict) or set(entry) != {score}:
            raise ValueError(f"each band is {form}, got {entry!r}")
        value = entry[score]
        low, high = (value, value) if not isinstance(value, list) else (value + [None, None])[:2]
        if isinstance(value, list) and len(value) != 2 or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
            raise ValueError(f"each band is {form} with whole numbers, got {entry!r}")
        if low > high:
            raise ValueError(f"a band runs from low to high, got {entry!r}")
        if not -(1 << 63) <= low <= high < 1 << 63:
            raise ValueError(f"a band's ends are 64-bit integers, got {entry!r}")
        if lowest is not None and low < lowest:
            raise ValueError(f"a band of {score} starts at {lowest} or above (nothing scoring less is kept), "
                             f"got {entry!r}")
        bands.append((low, high))
    return tuple(bands)


def band_text(band: Band, score: str) -> str:
    """A band as summary.md and the notes say it.

    >>> band_text((8.0, math.inf), "expert ratio")
    'expert ratio at least 8'
    """
    low, high = band
    if math.isinf(high):
        return f"{score} at least {low:g}"
    return f"{score} {low:g}" if low == high else f"{score} {low:g}..{high:g}"


def band_json(band: Band) -> list[float | None]:
    """A band as records and results.json hold it: an infinite end as null (JSON has no infinity)."""
    return [None if math.isinf(end) else end for end in band]


def band_of(value: list[float | None]) -> Band:
    """The band :func:`band_json` wrote."""
    low, high = value
    return (-math.inf if low is None else low, math.inf if high is None else high)


class Keeps(pydantic.BaseModel):
    """The job keys ``keep`` and ``keep_cap``. A job kind names its score in ``KEEP_SCORE`` (whole-number bands,
    :func:`parse_bands`), or reads its own bands by overriding :meth:`parse_keep` and ``KEEP_EXAMPLE``."""

    KEEP_SCORE: ClassVar[str] = "score"
    KEEP_LOWEST: ClassVar[int | None] = None
    """The lowest score a kept rank can have (a band reaching below it is refused); None: any."""
    KEEP_EXAMPLE: ClassVar[str] = ""
    """One band as a job file writes it, for the error message (default ``{<KEEP_SCORE> = 2}``)."""

    keep: list[dict[str, Any]] = pydantic.Field(default_factory=list)
    """Score bands to store in full, e.g. ``[{score = [5, 7]}]``: queries inside them are instant."""
    keep_cap: int = pydantic.Field(KEEP_CAP, ge=1, le=MAX_KEPT)
    """Ranks kept per band and row (Fling!: layer) at most, the lowest; results.json says when it cut."""

    @pydantic.field_validator("keep", mode="before")
    @classmethod
    def _bands(cls, keep: Any) -> list[dict[str, Any]]:
        if not isinstance(keep, list):
            example = cls.KEEP_EXAMPLE or f"{{{cls.KEEP_SCORE} = 2}}"
            raise ValueError(f"a list of bands, e.g. keep = [{example}], got {keep!r}")
        cls.parse_keep(keep)
        return keep

    @classmethod
    def parse_keep(cls, keep: list[dict[str, Any]]) -> tuple[Band, ...]:
        """The bands of a ``keep`` value; a ValueError naming an entry that is not one."""
        return parse_bands(keep, cls.KEEP_SCORE, cls.KEEP_LOWEST)

    def bands(self) -> tuple[Band, ...]:
        return self.parse_keep(self.keep)


def kept_record(run: RunDir, prefix: str, kept: tuple[Kept, ...]) -> list[dict[str, Any]]:
    """A task's kept bands as record fields: small ones inline, larger ones in arrays under ``prefix``."""
    out = []
    for i, band in enumerate(kept):
        entry: dict[str, Any] = {"band": band_json(band.band), "cap": band.cap, "matched": band.matched}
        if len(band.ranks) <= INLINE_KEPT:
            entry["inline"] = [band.ranks.tolist(), band.scores.tolist(), band.payload.tolist()]
            entry["dtype"] = str(band.scores.dtype)
        else:
            _write(run, f"{prefix}/kept/{i}", band)
        out.append(entry)
    return out


def kept_of_record(run: RunDir, prefix: str, entries: list[dict[str, Any]]) -> tuple[Kept, ...]:
    """The kept bands a task's record stands for (:func:`kept_record`)."""
    out = []
    for i, entry in enumerate(entries):
        band = band_of(entry["band"])
        if "inline" in entry:
            ranks, scores, payload = entry["inline"]
            arrays = (np.array(ranks, np.uint64), np.array(scores, entry.get("dtype", "int64")),
                      np.array(payload, np.uint8))
        else:
            arrays = tuple(_read(run, f"{prefix}/kept/{i}"))
        out.append(Kept(band, entry["cap"], *arrays, matched=entry["matched"]))
    return tuple(out)


def store_kept(run: RunDir, row: str, kept: tuple[Kept, ...]) -> list[dict[str, Any]]:
    """Write a row's merged bands to ``<row>/kept/<i>``; their results.json entries."""
    out = []
    for i, band in enumerate(kept):
        _write(run, f"{row}/kept/{i}", band)
        out.append({"band": band_json(band.band), "matched": band.matched, "kept": len(band.ranks),
                    "cut": band.cut, "store": f"store.zarr/{row}/kept/{i}"})
    return out


def read_kept(stored: Any, row: str, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ranks, scores, payload)`` of band ``index`` of ``row``, as the run's records vouch for them."""
    prefix = f"{row}/kept/{index}"
    payload = stored.read(f"{prefix}/payload") if stored.has(f"{prefix}/payload") else np.zeros(0, np.uint8)
    return stored.read(f"{prefix}/ranks"), stored.read(f"{prefix}/scores"), payload


def kept_lines(kept: list[dict[str, Any]] | None, score: str, items: str,
               tally: dict[str, int] | None = None) -> list[str]:
    """summary.md's lines for a row's kept bands; with the row's ``tally`` (score -> ranks), how many have each
    score of a band.

    >>> kept_lines([{"band": [2, 3], "matched": 12, "kept": 10, "cut": True, "store": "store.zarr/r/kept/0"}],
    ...            "solutions", "puzzles", {"2": 5, "3": 7})
    ['- solutions 2..3: 12 puzzles (2: 5, 3: 7), the lowest 10 ranks kept (the cap, `keep_cap`, cut it) in `store.zarr/r/kept/0`']
    """
    out = []
    for band in kept or []:
        low, high = band_of(band["band"])
        split = ""
        if tally is not None and low < high and band["matched"]:
            split = " (" + ", ".join(f"{s}: {tally[s]:,}" for s in sorted(tally, key=int) if low <= int(s) <= high) + ")"
        what = f"the lowest {band['kept']:,} ranks kept (the cap, `keep_cap`, cut it)" if band["cut"] else "all kept"
        out.append(f"- {band_text((low, high), score)}: {band['matched']:,} {items}{split}, {what} in "
                   f"`{band['store']}`")
    return out


def covering(kept: list[dict[str, Any]] | None, low: int, high: int) -> int | None:
    """The index of a band of a row's results that holds every rank scoring ``low..high`` (one not cut), or None."""
    for i, band in enumerate(kept or []):
        first, last = band_of(band["band"])
        if first <= low and high <= last and not band["cut"]:
            return i
    return None


def _write(run: RunDir, prefix: str, band: Kept) -> None:
    run.arrays.write_array(f"{prefix}/ranks", band.ranks.astype(np.uint64))
    run.arrays.write_array(f"{prefix}/scores", band.scores)
    if len(band.payload):
        run.arrays.write_array(f"{prefix}/payload", band.payload)


def _read(run: RunDir, prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    payload = run.arrays.read_array(f"{prefix}/payload") if run.arrays.has_array(f"{prefix}/payload") else np.zeros(0, np.uint8)
    return run.arrays.read_array(f"{prefix}/ranks"), run.arrays.read_array(f"{prefix}/scores"), payload
