"""One state of a user's retrograde space, as a run sees it (``RetrogradeRun.probe``, ``epcg probe``).

A state is written ``LAYER RANK`` (two whole numbers: its layer and its rank
in the layer, as summary.md and ``epcg export`` give them), or as the space's
``describe`` writes it when the space reads that back (``encode(text) ->
(layer, rank)``); a job of several rows names the row first (``r001: 5 12``).
Its bits (``solvable``, …) are read from the run's stored layer: the full
layer where the run keeps it, else (a reduced space's deepest layer, one state
per class) the space's ``expand`` of the stored classes, one word of it. A
layer the run did not solve is said so, never guessed.

>>> layer_and_rank("5 12"), layer_and_rank("layer 5, rank 12"), layer_and_rank("oo.o")
((5, 12), (5, 12), None)
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from epcg.api.probe import Probe
from epcg.kinds.designs import State
from epcg.kinds.retrograde import array_prefix
from epcg.runtime.errors import InvalidValue
from epcg.runtime.records import Vouched
from epcg.search.retrograde import RetrogradeSpace

LAYER_RANK = re.compile(r"(?:layer\s*)?([0-9]+)\s*[\s,/]\s*(?:rank\s*)?([0-9]+)", re.IGNORECASE)


def layer_and_rank(text: str) -> tuple[int, int] | None:
    """``(layer, rank)`` of ``"LAYER RANK"`` (also ``"layer 5, rank 12"``, ``"5/12"``); None for other text."""
    match = LAYER_RANK.fullmatch(text.strip())
    return (int(match[1]), int(match[2])) if match else None


def probe(run: Any, puzzle: Any) -> Probe:
    """What ``run`` (a :class:`~epcg.kinds.runs.RetrogradeRun`, read with its space trusted) knows of the state
    ``puzzle`` names (see the module docstring); an InvalidValue naming the first problem."""
    config = run.config
    names = [config.row(i) for i in range(len(config.rows))]
    index, text = _row(run.name, names, puzzle)
    space, row, deepest = config.retrograde_space(index), names[index], config.deepest_of(index)
    layer, rank = _state(space, text)
    solved = space.first <= layer <= deepest
    bits = _bits(run.stored, space, row, layer, rank) if solved else {}
    described = space.describe(layer, rank) if space.describe is not None else ""
    state = State(run.name, space.name, layer, rank, bits, described, space.render, row)
    where = f"{row} " if row else ""
    one_line = bool(described) and "\n" not in described
    lines = [f"{where}layer {layer}, rank {rank:,} of {space.layer_size(layer):,}"
             + (f": {described}" if one_line else "")]
    if solved:
        lines.append(", ".join(f"{bit}: {'yes' if on else 'no'}" for bit, on in bits.items())
                     + f" (read from the run's layer {layer})")
        lines.append(f"kept by the run: yes, every state of layer {layer} is stored with its bits")
    else:
        lines.append(f"kept by the run: no, it solved layers {space.first} to {deepest}; a run with "
                     f"`last = {layer}` solves layer {layer}")
    facts = {**({"row": row} if row else {}), "layer": layer, "rank": rank, "states": space.layer_size(layer),
             "bits": bits if solved else None, space.bits[0]: bits.get(space.bits[0]) if solved else None,
             "kept": solved, "text": described}
    return Probe(f"{layer} {rank}", facts, lines, "" if one_line else described, state.figure)


def _row(job: str, names: list[str], puzzle: Any) -> tuple[int, str]:
    """The row ``puzzle`` names (``"r001: ..."`` or ``"1: ..."``; the only one when the job has one) and the rest."""
    if not isinstance(puzzle, str):
        raise InvalidValue(f"a state is text ('LAYER RANK', or the space's own notation), got {puzzle!r}")
    head, sep, tail = puzzle.partition(":")
    head = head.strip()
    if sep and (head in names or head.isdigit() and int(head) < len(names)) and len(names) > 1:
        return (names.index(head) if head in names else int(head)), tail.strip()
    if len(names) == 1:
        return 0, puzzle.strip()
    raise InvalidValue(f"name the row first, as in '{names[1]}: 5 12': run {job} has rows {', '.join(names)}")


def _state(space: RetrogradeSpace, text: str) -> tuple[int, int]:
    """The ``(layer, rank)`` that ``text`` names, within the space."""
    if not text:
        raise InvalidValue("the state is empty: give its layer and rank ('5 12') or the state itself")
    found = layer_and_rank(text)
    if found is None:
        if space.encode is None:
            raise InvalidValue(f"{text!r} is not 'LAYER RANK' (two whole numbers), and space {space.name} has no "
                               "encode(text) to read a state")
        try:
            layer, rank = (int(v) for v in space.encode(text))
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise InvalidValue(f"space {space.name} cannot read {text!r}: {exc}") from None
        found = layer, rank
    layer, rank = found
    if not space.first <= layer <= space.last:
        raise InvalidValue(f"layer {layer} is not a layer of {space.name}: its layers run {space.first} to "
                           f"{space.last}")
    size = space.layer_size(layer)
    if not 0 <= rank < size:
        raise InvalidValue(f"rank {rank} is past layer {layer}: its ranks run 0 to {size - 1:,}")
    return layer, rank


def _bits(stored: Vouched, space: RetrogradeSpace, row: str, layer: int, rank: int) -> dict[str, bool]:
    """The state's bits in the run's stored layer: its word of the full layer, or of the reduced layer expanded."""
    prefix, word = array_prefix(row), rank // 64
    if stored.has(f"{prefix}{space.bits[0]}/{layer}") or space.expand is None:
        words = [stored.read(f"{prefix}{bit}/{layer}", word, word + 1) for bit in space.bits]
    else:
        reduced = tuple(stored.read(f"{prefix}orbits/{bit}/{layer}") for bit in space.bits)
        words = list(space.expand(layer, reduced, word, word + 1))
    return {bit: bool(int(np.asarray(w)[0]) >> (rank % 64) & 1) for bit, w in zip(space.bits, words)}
