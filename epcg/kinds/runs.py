"""Runs of a user's space (the generic ``scan`` and ``retrograde`` kinds) as Python objects, and their part of
report.html: the designs a scan kept, the states a retrograde analysis marked.

>>> ScanRun.FOUND, RetrogradeRun.FOUND
('designs', 'states')
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from epcg.api.probe import Probe
from epcg.api.runs import Run, is_int
from epcg.kinds.designs import ROLES, Design, State, decoded_text, set_bits
from epcg.kinds.keep import MAX_KEPT, band_of, band_text, covering, read_kept
from epcg.kinds.retrograde import array_prefix
from epcg.kinds.scan import drawn_space, space_of
from epcg.report.gallery import Group, Item, share, spread
from epcg.runtime.errors import InvalidValue, UserError

STATE_LAYERS = 4
"""Layers of a retrograde run (per row of a family) in the gallery, deepest first."""


class ScanRun(Run):
    """A scan of a user's space: ``designs()`` at each row's minimum, its top ones, those at its maximum."""

    FOUND = "designs"
    WHERE = {"designs": {
        "row": ("`row-000` or an index", "that row's designs (default: every row)"),
        "role": ("`min`, `top`, `max`, `kept`", "designs kept as that: at the row's lowest score, its top ones, at "
                 "its highest (`max = true`), in a band of the job's `keep`"),
        "score": ("a score", "designs with that score, each once: stored when the run kept it, else recomputed"),
        "distinct": ("`patterns`, `boards`", "`patterns`: per row, one design per pattern (the space's "
                     "`pattern(rank)`, docs/scan.md), its `copies` the listed designs it stands for; `boards` "
                     "(default): every design"),
    }}
    """The filters of ``designs``: values and what each selects (docs/filters.md)."""
    NOTATION = "\n".join([
        "- `row`: one row of the job (its keys in parentheses); `rank`: a design's index in the space's "
        "generator; `score`: what the space's evaluator gave it.",
        "- `min` / `at min`: the row's lowest score and how many designs reach it; `max` / `at max` likewise for "
        "the highest (job key `max = true`); `top`: the highest scores, ties broken by lower rank. Every count is "
        "of designs, one per rank.",
        "- `ignored`: designs with the job's `ignore` score, counted there and left out of the minimum, the "
        "maximum and the histogram plot.",
        "- The table's other columns: `parameters` the row's keys; `ranks` the designs scanned; `top score` the "
        "highest score of the `top` list; `distinct scores` how many different scores the row's histogram has; "
        "`seconds` compute time summed over chunks. A row's histogram: each `score` and the `designs` with it.",
        "- A design's text is the space's `decode(rank)` (JSON in the export when it is a dict, list or number); "
        "its picture is the space's `render`. More: docs/notation.md and docs/scan.md.",
    ])
    found_types = (Design,)
    FILTERS = (("row", "row", "select"), ("role", "kept as", "select"), ("score", "score", "select"))

    def designs(self, row: str | int | None = None, *, role: str | None = None,
                score: int | None = None, distinct: str | None = None) -> Iterator[Design]:
        """Designs a scan of a user's space kept, row by row: every rank at the row's lowest score (read from the
        store in rank order), its ``top`` ranks, with ``max = true`` every rank at its highest score, and every
        rank in a band the job keeps (``keep = [{score = [5, 7]}]``).

        ``row``: a row's name (``"row-001"``) or index; ``role``: ``"min"``, ``"top"``, ``"max"`` or ``"kept"``
        only. ``score``: only designs with that score, each once: from the store when the run kept that score
        (its minimum, maximum or a kept band), else recomputed: the row runs again as a new run keeping that
        score, on the embedded cluster, its estimate and progress on stderr. With both, the designs of that
        role that have that score (read from the store, never recomputed). ``distinct="patterns"``: per row
        the first design of each pattern, when the space gives ``pattern(rank)`` (each with ``copies``, how many
        of those listed share it); ``"boards"`` (or None) every design. A user's space has no orbits.
        """
        if role is not None and role not in ROLES:
            raise UserError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if score is not None and not is_int(score):
            raise UserError(f"score must be a whole number, got {score!r}")
        if distinct not in (None, "boards", "patterns"):
            raise InvalidValue(f"distinct must be patterns or boards for a scan of your space (it has no orbits), "
                               f"got {distinct!r}")
        if distinct == "patterns":
            yield from _first_of_patterns(self, self.designs(row, role=role, score=score))
            return
        pairs = list(zip(self.config.rows, self.results["rows"]))
        if row is not None:
            chosen = [pair for i, pair in enumerate(pairs) if row in (i, pair[1]["row"])]
            if not chosen:
                raise UserError(f"run {self.name} has no row {row!r}; its rows are row-000 .. row-{len(pairs) - 1:03d}")
            pairs = chosen
        for params, res in pairs:
            if score is None or role is not None:  # a role names what the store holds: filter it
                yield from (d for d in self._row_designs(params, res, role) if score in (None, d.score))
            else:
                yield from self._scoring(params, res, score)

    def _row_designs(self, params: dict[str, Any], res: dict[str, Any], role: str | None) -> Iterator[Design]:
        design = self._maker(params, res)
        if role in (None, "min") and res.get("min") is not None:
            yield from (design(r, res["min"], "min") for r in self._ranks(f"{res['row']}/at_min/ranks"))
        if role in (None, "top"):
            yield from (design(t["rank"], t["score"], "top") for t in res.get("top", []))
        if role in (None, "max") and res.get("max") is not None:
            yield from (design(r, res["max"], "max") for r in self._ranks(f"{res['row']}/at_max/ranks"))
        if role in (None, "kept"):
            for i, _ in enumerate(res.get("kept") or []):
                ranks, scores, _payload = read_kept(self.stored, res["row"], i)
                yield from (design(int(r), int(s), "kept") for r, s in zip(ranks, scores))

    def _scoring(self, params: dict[str, Any], res: dict[str, Any], score: int) -> Iterator[Design]:
        """The row's designs with ``score``, each once, in rank order."""
        design = self._maker(params, res)
        for role in ("min", "max"):
            if res.get(role) == score:
                yield from (design(r, score, role) for r in self._ranks(f"{res['row']}/at_{role}/ranks"))
                return
        band = covering(res.get("kept"), score, score)
        if band is not None:
            ranks, scores, _payload = read_kept(self.stored, res["row"], band)
            yield from (design(int(r), score, "kept") for r in ranks[scores == score])
            return
        tally, cap = res.get("histogram"), self.config.histogram_cap
        if tally is not None and (cap is None or score <= cap) and not tally.get(str(score)):
            return  # the row's exact histogram has no design with that score: nothing to recompute
        with self.recomputed({"rows": [params], "keep": [{"score": score}], "keep_cap": MAX_KEPT},
                             f"the designs of {res['row']} scoring {score}") as again:
            ranks, _scores, _payload = read_kept(again.stored, "row-000", 0)
            yield from (design(int(r), score, "kept") for r in ranks)

    def _maker(self, params: dict[str, Any], res: dict[str, Any]) -> Callable[[int, int | None, str], Design]:
        """A function making the row's :class:`Design` of a rank, score and role (by rank alone, without text or
        picture, when the run was opened without trusting its space: see :func:`epcg.open`)."""
        with self._reading():
            space = drawn_space(self.config.space, params)
        decode, render = getattr(space, "decode", None), getattr(space, "render", None)

        def design(rank: int, score: int | None, kind: str) -> Design:
            text = decoded_text(decode(rank)) if decode is not None else ""
            return Design(self.name, self.config.space, res["row"], params, int(rank), score, kind, text,
                          render, decode)

        return design

    def probe(self, puzzle: Any) -> Probe:
        """What the run knows of one design: ``"RANK"``, or ``"ROW: RANK"`` (the row's name, ``row-001``, or index)
        when the job has several rows; instead of a rank, the object itself as JSON when the space has
        ``encode(obj) -> rank``. Its score (the space's evaluator, on the spot), decoded text, picture, and
        whether the run kept it (at the row's minimum or maximum, among its top, in a kept band)."""
        pairs = list(zip(self.config.rows, self.results["rows"]))
        text = str(puzzle).strip()
        head, sep, tail = text.partition(":")
        names = [res["row"] for _, res in pairs]
        if sep and (head.strip() in names or head.strip().isdigit() and int(head) < len(pairs)):
            index = names.index(head.strip()) if head.strip() in names else int(head)
            text = tail.strip()
        elif len(pairs) == 1:
            index = 0
        else:
            raise InvalidValue(f"name the row first, as in 'row-001: 123': run {self.name} has rows "
                               f"{', '.join(names)}")
        params, res = pairs[index]
        with self._reading():  # the space is the job's code: imported only for a trusted run
            space = space_of(self.config.space, params)
        rank = _rank_of(space, text)
        score = int(space.evaluate(rank, *space.data))
        kept = [role for role, there in (("min", res.get("min") == score and rank in self._ranks(
                    f"{res['row']}/at_min/ranks")), ("top", any(t["rank"] == rank for t in res.get("top", []))),
                    ("max", res.get("max") == score and rank in self._ranks(f"{res['row']}/at_max/ranks")))
                if there]
        for i, _ in enumerate(res.get("kept") or []):
            if rank in read_kept(self.stored, res["row"], i)[0].tolist():
                kept.append("kept")
        design = self._maker(params, res)(rank, score, kept[0] if kept else "top")
        ignored = self.config.ignore is not None and score == self.config.ignore
        facts = {"row": res["row"], "params": params, "rank": rank, "score": score, "ignored": ignored,
                 "kept": kept, "text": design.text}
        where = ", ".join(f"{k}={v}" for k, v in params.items())
        lines = [f"{res['row']} ({where}): rank {rank:,} of {space.max_rank:,}, score {score}"
                 + (" (the job's ignore score)" if ignored else ""),
                 "kept by the run: " + ("; ".join(ROLES[role] for role in kept) if kept else
                                        f"no (the row's minimum is {res.get('min')})")]
        return Probe(str(rank), facts, lines, design.text, design.figure)

    def _ranks(self, name: str) -> Iterator[int]:
        """A stored rank array, one record's range at a time, as the records vouch for it."""
        for _, ranks in self.stored.blocks(name):
            yield from (int(r) for r in ranks)

    def gallery(self, items: int) -> list[Group]:
        """Per row: designs at the minimum (spread over all of them), the top ones, those at the maximum."""
        rows = self.results["rows"]
        groups = [(res, role) for res in rows for role in ROLES if role != "kept" and _kept(res, role)]
        bands = [(res, i) for res in rows for i, band in enumerate(res.get("kept") or []) if band["kept"]]
        n = share(items, len(groups) + len(bands))
        out = []
        for res, role in groups:
            total = _kept(res, role)
            picks = spread(total, n) if role == "min" else set(range(min(n, total)))
            designs = [d for i, d in enumerate(self.designs(res["row"], role=role)) if i in picks]
            name = f"{_row_title(res)}: {ROLES[role]}"
            out.append(Group(name, total, [_design_item(d, name) for d in designs],
                             every=map(partial(_design_item, group=name), self.designs(res["row"], role=role))))
        for res, i in bands:
            band = res["kept"][i]
            ranks, scores, _payload = read_kept(self.stored, res["row"], i)
            design = self._maker(res["params"], res)
            name = f"{_row_title(res)}: {band_text(band_of(band['band']), 'score')} (kept)"
            out.append(Group(name, band["matched"], [
                _design_item(design(int(ranks[j]), int(scores[j]), "kept"), name)
                for j in sorted(spread(len(ranks), n))],
                every=map(partial(_design_item, group=name), map(design, ranks.tolist(), scores.tolist(),
                                                                 itertools.repeat("kept")))))
        return out


def _design_item(design: Design, group: str) -> Item:
    """A design in the gallery, with the values its filters act on."""
    return Item(design, group, {"row": design.row, "role": design.role, "score": design.score})


def _row_title(res: dict[str, Any]) -> str:
    """A scan row as the gallery names it: ``row-000 (n=3)``."""
    params = ", ".join(f"{k}={v}" for k, v in res["params"].items())
    return f"{res['row']}{f' ({params})' if params else ''}"


def _kept(res: dict[str, Any], role: str) -> int:
    """How many designs of a scan row's results have ``role``."""
    if role == "top":
        return len(res.get("top") or [])
    return int(res.get(f"at_{role}") or 0) if res.get(role) is not None else 0


def _first_of_patterns(run: ScanRun, designs: Iterator[Design]) -> Iterator[Design]:
    """Per row, the first of ``designs`` of each pattern (the space's ``pattern(rank)``), with its copies."""
    import dataclasses

    for _row, group in itertools.groupby(designs, key=lambda d: d.row):
        group = list(group)
        with run._reading():  # pattern() is the space's code: run only for a trusted run
            space = space_of(run.config.space, group[0].params)
        if space.pattern is None:
            raise InvalidValue(f"space {space.name} gives no pattern(rank): distinct='patterns' needs one "
                               "(docs/scan.md)")
        firsts: dict[Any, Design] = {}
        copies: dict[Any, int] = {}
        for d in group:
            key = space.pattern(d.rank)
            firsts.setdefault(key, d)
            copies[key] = copies.get(key, 0) + 1
        yield from (dataclasses.replace(d, copies=copies[key]) for key, d in firsts.items())


def _rank_of(space: Any, text: str) -> int:
    """The rank ``text`` names: a number, or an object (JSON) through the space's ``encode``; within the space."""
    import json

    if text.lstrip("-").isdigit():
        rank = int(text)
    elif space.encode is None:
        raise InvalidValue(f"{text!r} is not a rank (a whole number), and space {space.name} has no encode(obj) "
                           "to rank an object")
    else:
        try:
            obj = json.loads(text)
        except ValueError:
            raise InvalidValue(f"{text!r} is neither a rank nor an object in JSON") from None
        try:
            rank = int(space.encode(obj))
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise InvalidValue(f"space {space.name} cannot rank {text}: {exc}") from None
    if not 0 <= rank < space.max_rank:
        raise InvalidValue(f"rank {rank} is past the space: its ranks run 0 to {space.max_rank - 1:,}")
    return rank


class RetrogradeRun(Run):
    """A retrograde analysis of a user's space: the ``states()`` of each layer with a bit set."""

    FOUND = "states"
    NOTATION = "\n".join([
        "- The layer table, one table per row of a family: `layer` the layer (for peg solitaire, the pegs on the "
        "board); `states` every state of the layer; then one column per bit of the space (such as `solvable`): the "
        "states with that bit set; `checksum` equal exactly when two runs' layers are equal bit for bit (however "
        "they were cut into chunks); `tasks` the chunks of the layer; `seconds` their compute time summed.",
        "- A state's text is the space's `describe(layer, rank)`, its picture the space's `render`; `rank` its "
        "index in the layer. summary.md lists the first states of every layer with the first bit set, or says "
        "\"none\". More: docs/scan.md.",
    ])
    WHERE = {"states": {
        "layer": ("a layer", "the states of that layer (default: every layer, deepest first)"),
        "bit": ("one of the space's bits", "states with that bit set (default: its first, such as `solvable`)"),
        "row": ("`r001` or an index", "the states of that row of a family (default: every row)"),
    }}
    """The filters of ``states``: values and what each selects (docs/filters.md)."""
    found_types = (State,)
    FILTERS = (("row", "row", "select"), ("layer", "layer", "select"))

    def states(self, layer: int | None = None, *, bit: str | None = None,
               row: int | str | None = None) -> Iterator[State]:
        """States of a retrograde run of a user's space that have ``bit`` set (default: the space's first bit, e.g.
        solvable), deepest layer first, in rank order within a layer; or those of layer ``layer`` only; of every
        row of a family, or of row ``row`` (its index, or its name as found.jsonl writes it: ``"r001"``). A reduced
        space's deepest layer lists each class's representative."""
        count = len(self.config.rows)
        with self._reading():  # the space's bits, layers and descriptions are its code's
            names = [self.config.row(i) for i in range(count)]
        if isinstance(row, str) and row in names:
            row = names.index(row)
        if row is not None and not (is_int(row) and 0 <= row < count):
            listed = f" ({', '.join(names)})" if any(names) else ""
            raise UserError(f"run {self.name} has rows 0..{count - 1}{listed}, not {row!r}")
        for i in [row] if row is not None else range(count):
            with self._reading():
                space, name, deepest = self.config.retrograde_space(i), names[i], self.config.deepest_of(i)
            wanted = space.bits[0] if bit is None else bit
            if wanted not in space.bits:
                raise UserError(f"bit must be one of {', '.join(space.bits)}, got {wanted!r}")
            for k in [layer] if layer is not None else range(deepest, space.first - 1, -1):
                if not space.first <= k <= deepest:
                    raise UserError(f"run {self.name} has layers {space.first}..{deepest}, not {k}")
                prefix = array_prefix(name) + ("" if self.stored.has(f"{array_prefix(name)}{wanted}/{k}")
                                               else "orbits/")
                arrays = {b: self.stored.read(f"{prefix}{b}/{k}") for b in space.bits}
                for rank in set_bits(arrays[wanted]):
                    flags = {b: bool(int(a[rank // 64]) >> (rank % 64) & 1) if b != wanted else True
                             for b, a in arrays.items()}
                    text = space.describe(k, rank) if space.describe is not None else ""
                    yield State(self.name, space.name, k, rank, flags, text, space.render, name)

    def probe(self, puzzle: Any) -> Probe:
        """What the run knows of one state: ``"LAYER RANK"`` (two whole numbers), or the state as the space's
        ``describe`` writes it when the space has ``encode(text) -> (layer, rank)``; ``"ROW: ..."`` first (a row's
        name, ``r001``, or index) when the job has several rows. Its bits (``solvable``, …) read from the run's
        stored layer, whether the run kept that layer, its text and picture. The space is the job's code: only a
        trusted run (``epcg.open(DIR, trust_space=True)``, ``--trust-space``) imports it."""
        from epcg.kinds.retrograde_probe import probe

        with self._reading():
            return probe(self, puzzle)

    def gallery(self, items: int) -> list[Group]:
        """Per row and layer, deepest first: the first states with the space's first bit set."""
        bit = self.results["bits"][0]
        with self._reading():
            names = [self.config.row(i) for i in range(len(self.config.rows))]
        chosen = []
        for i, row in enumerate(names):
            layers = [r for r in reversed(self.results["rows"]) if r.get("row", "") == row and r[bit]]
            chosen += [(i, row, r) for r in layers[:STATE_LAYERS]]
        n = share(items, len(chosen))
        out = []
        for i, row, res in chosen:
            name = f"{f'{row} ' if row else ''}layer {res['layer']}: {bit}"
            states = list(itertools.islice(self.states(res["layer"], row=i), n))
            out.append(Group(name, res[bit], [_state_item(st, name, row) for st in states],
                             every=map(partial(_state_item, group=name, row=row), self.states(res["layer"], row=i))))
        return out


def _state_item(state: State, group: str, row: str) -> Item:
    """A state in the gallery, with the values its filters act on."""
    return Item(state, group, {"layer": state.layer, "row": row})
