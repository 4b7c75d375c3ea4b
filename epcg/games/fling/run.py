"""A Fling! run as a Python object: its boards layer by layer, its distributions, and its part of report.html.

>>> FlingRun.FOUND, [t.__name__ for t in FlingRun.found_types]
('boards', ['FlingBoard'])
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from epcg.api.probe import Probe
from epcg.api.runs import Run, is_int
from epcg.games.fling.evaluation import kept_bands, kept_name
from epcg.games.fling.found import (
    FlingBoard,
    TopRatio,
    orbit_ranks,
    orbits_only,
    ratio_frame,
    sample_ranks,
    set_ranks,
    solvable_ranks,
    solution_count_frame,
)
from epcg.kinds.keep import MAX_KEPT, band_of, band_text, covering, read_kept
from epcg.report.gallery import Group, Item, plot_axes, share
from epcg.report.pictures import png_bytes
from epcg.runtime.errors import InvalidValue


class FlingRun(Run):
    """A Fling! run: ``boards()`` of any layer, ``best_boards()``, the ratio and solution-count distributions."""

    FOUND = "boards"
    WHERE = {"boards": {
        "pieces": ("1 .. max_pieces", "the boards of that layer (default: every layer)"),
        "unique": ("`true`, `false`", "`true` (default): uniquely solvable boards; `false`: boards with several "
                   "solutions (the API's `None`: every solvable board)"),
        "min_ratio": ("a number", "uniquely solvable boards with an expert ratio at least that: read from a band of "
                      "the job's `keep` holding every ratio from there up, else recomputed"),
        "orbits": ("`true`, `false`", "`true`: one board per symmetry orbit, its `orbit_size` the boards it stands "
                   "for (default: every board, mirror images included)"),
        "distinct": ("`patterns`, `orbits`, `boards`", "`patterns`: one board per pattern (the same puzzle for a "
                     "designer: docs/notation.md), its `copies` the boards it stands for; `orbits`: one per orbit; "
                     "`boards` (default): every board"),
    }}
    """The filters of ``boards``: values and what each selects (docs/filters.md)."""
    NOTATION = "\n".join([
        "- A board: columns `a`, `b`, … from the left, rows `1`, `2`, … from the top; `o` a piece, `.` empty. "
        "A move such as `f5L` flings the piece in column f, row 5, to the left (`R` right, `U` up, `D` down); a "
        "solution is its moves in order, down to one piece.",
        "- `ratio`: the expert ratio, brute-force search-tree nodes / expert search-tree nodes (high: hard for a "
        "solver that tries every move, easy for one that sees which moves matter). A brute-force solver tries every "
        "legal move at every position; the expert, after each move, only the moves that depend on it.",
        "- Every count is of **boards**, mirror images included. A board's *orbit* is the board with its mirror "
        "images and half turn (same solutions, same ratio). In Python: `boards(k, orbits=True)`; export: "
        "`--where orbits=true`.",
        "- A board's *pattern*: the boards that are the same puzzle (moved, mirrored, turned, or with empty rows and "
        "columns no move needs closed up; docs/notation.md). The best list shows one board per pattern, its board "
        "of lowest rank, and its caption says how many boards its pattern holds. In Python: "
        "`best_boards(distinct=...)`, `boards(k, distinct=\"patterns\")`; export: `--where distinct=patterns`.",
        "- Stages in `epcg plan` and `epcg status`: `k06` solves layer 6 (boards with 6 pieces); `f05` fills "
        "layer 5 from one board per orbit to every board; `top` scores the deepest layer (the best list and the "
        "tie at the top); `r05` the expert-ratio histogram of layer 5; `c06` the solution counts of layer 6. "
        "More: docs/notation.md and docs/games.md.",
        "- The layer table: `pieces` the layer; `boards` every board of that many pieces; `solvable` those that "
        "can be played down to one piece; `unique` those with exactly one way to do it; `expected (solvable, "
        "unique)` the paper's figures for 7×8 (✓ when ours agree); `tasks` the chunks the layer was cut into; "
        "`seconds` their compute time summed; `boards/s per worker` boards per compute second, `boards/s wall` "
        "per second of the layer's elapsed time; `checksum` equal exactly when two runs' layers are equal bit for "
        "bit.",
        "- The best list: `#` its place; `rank` the board's index in its layer (the orbit's lowest); `boards` the "
        "boards its orbit stands for; `ratio`; `brute-force nodes` and `expert nodes` the positions each search "
        "visits; `solution` its moves. Kept bands: `band` the ratios kept, `orbits` evaluated, `boards` they "
        "stand for, `kept` how many were stored, `where` their arrays in store.zarr.",
        "- Expert ratios per piece count: `evaluated` all, or the share of a sample; `uniquely solvable` how many "
        "boards the histogram counts (**(sample)** when a sample's); `ratio below 1.1` the share whose ratio is "
        "about 1 (the expert saves nothing); `median bin`, `90th percentile bin`, `99th percentile bin`, `highest "
        "bin`: the 0.1-wide ratio bin (by its lower edge) below which half, 90 %, 99 % and all of them lie.",
        "- Solution counts per piece count: `counted` every solvable board, or the solvable ones among a random "
        "draw; `boards` how many were counted (**(sample)** when drawn, not the layer's); `exactly 1` the share "
        "uniquely solvable; `median`, `90th percentile`, `mean`, `highest` of the number of solutions.",
        "- The best list of distinct puzzles: each row one *pattern*, the boards that are the same puzzle for a "
        "designer (one becomes the other by mirrors, turns, moving it and closing up empty rows and columns no move "
        "needs: docs/notation.md); `copies` the boards it stands for, `orbit` how many of them are its board's "
        "mirror images and half turn.",
        "- Reads of the layer before: `read` the bytes (uncompressed) a layer's tasks read of the layer before "
        "from the store; `× the layer before` that over the layer's own size (read amplification: 1 when each "
        "byte is read once); `plan` the multiple `epcg plan` expected; `by host` the bytes each machine read.",
    ])
    found_types = (FlingBoard,)
    FILTERS = (("pieces", "pieces", "select"), ("unique", "uniquely solvable", "select"),
               ("ratio", "expert ratio at least", "min"))

    def boards(self, pieces: int | None = None, *, unique: bool | None = True,
               min_ratio: float | None = None, orbits: bool = False,
               distinct: str | None = None) -> Iterator[FlingBoard]:
        """Fling! boards layer by layer (or only layer ``pieces``), every board counted: mirror images
        included, as the layer table, ``ratio_histogram`` and ``solution_counts`` count them.

        ``unique``: True for the uniquely solvable boards, False for those with
        several solutions, None for every solvable board. ``min_ratio`` keeps
        uniquely solvable boards whose expert ratio is at least that, an orbit at a
        time: read from the store when the job kept a band holding every ratio from
        there up (``keep = [{min_ratio = 8}]``), else recomputed: the layers up to
        ``pieces`` run again as a new run keeping that band, on the embedded
        cluster, with its estimate and progress on stderr.
        ``orbits=True`` gives one board per orbit instead (a board with its mirror
        images and half turn: the same solutions, the same ratio), the one of lowest
        rank; its ``orbit_size`` says how many boards it stands for. Boards come in
        rank order, except in the deepest layer of a symmetric run (stored one per
        orbit), where each orbit's boards come together, in the order of their lowest.
        ``distinct``: ``"patterns"`` gives the first board of each pattern (the boards that are one
        puzzle: :mod:`~epcg.games.fling.domain.patterns`; its ``copies`` says how many boards it stands
        for), ``"orbits"`` is ``orbits=True``, ``"boards"`` (or None) every board.
        """
        top = self.config.max_pieces
        if pieces is not None and not (is_int(pieces) and 1 <= pieces <= top):
            raise InvalidValue(f"pieces must be a piece count 1..{top} (this run's layers), got {pieces!r}")
        if unique not in (True, False, None):
            raise InvalidValue(f"unique must be True, False or None, got {unique!r}")
        if min_ratio is not None and (isinstance(min_ratio, (bool, np.bool_)) or not isinstance(min_ratio, numbers.Real)
                                      or not math.isfinite(min_ratio)):
            raise InvalidValue(f"min_ratio must be a number (a finite expert ratio), got {min_ratio!r}")
        if orbits not in (True, False):
            raise InvalidValue(f"orbits must be True or False, got {orbits!r}")
        check_distinct(distinct)
        found = self._boards([pieces] if pieces is not None else range(1, top + 1), unique, min_ratio,
                             orbits or distinct in ("orbits", "patterns"))
        return first_of_each_pattern(found) if distinct == "patterns" else found

    def _boards(self, layers: Iterable[int], unique: bool | None, min_ratio: float | None,
                orbits: bool) -> Iterator[FlingBoard]:
        c = self.config
        for k in layers:
            if min_ratio is not None and k > 1:
                if unique is not False:
                    yield from self._by_ratio(k, min_ratio, orbits)
                continue
            whole = orbits or not orbits_only(self.stored, k)
            for rank in set_ranks(self.stored, k, unique, (c.width, c.height) if orbits else None):
                board = FlingBoard(c.width, c.height, k, rank)
                if min_ratio is not None and (board.ratio is None or board.ratio < min_ratio):
                    continue
                yield board
                if not whole:
                    yield from (_mirror(board, r) for r in orbit_ranks(c.width, c.height, k, rank) if r != rank)

    def _by_ratio(self, k: int, min_ratio: float, orbits: bool) -> Iterator[FlingBoard]:
        """Layer ``k``'s uniquely solvable boards with an expert ratio of at least ``min_ratio``, from a kept band
        of this run or of a run that recomputes it."""
        bands = kept_bands(self.results, k)
        band = covering(bands, min_ratio, math.inf)
        if band is not None and bands[band]["exact"]:
            yield from self._expand(k, *read_kept(self.stored, kept_name(k), band)[:2], min_ratio, orbits)
            return
        if none_as_high(self.results, k, min_ratio):
            return
        changes = {"max_pieces": k, "keep": [{"min_ratio": min_ratio}], "keep_cap": MAX_KEPT, "ratio_sample": None,
                   "distributions": False, "top_puzzles": 0}
        with self.recomputed(changes, f"the {k}-piece boards with an expert ratio of at least {min_ratio:g}") as again:
            yield from self._expand(k, *read_kept(again.stored, kept_name(k), 0)[:2], min_ratio, orbits)

    def _expand(self, k: int, ranks: np.ndarray, ratios: np.ndarray, min_ratio: float,
                orbits: bool) -> Iterator[FlingBoard]:
        """The boards of evaluated ``ranks`` (one per orbit in a symmetric run, else every board) with a ratio of at
        least ``min_ratio``: one per orbit, its lowest rank, or every board of each orbit together."""
        c = self.config
        reduced = c.symmetry
        for rank in ranks[ratios >= min_ratio].tolist():
            board = FlingBoard(c.width, c.height, k, rank)
            images = orbit_ranks(c.width, c.height, k, rank)
            if orbits:
                if reduced or rank == min(images):
                    yield board
                continue
            yield board
            if reduced:
                yield from (_mirror(board, r) for r in images if r != rank)

    def solution_counts(self, row: int | None = None):
        """How many solvable boards (mirror images included) of layer ``row`` (a piece count) have each number of
        solutions (a pandas
        Series, its ``attrs`` say ``exact``, and for a sample ``drawn`` and ``seed``), or, without ``row``, every
        layer's as a DataFrame (``pieces``, ``solutions``, ``boards``, ``exact``). A sampled layer's counts are
        the solvable boards among ``drawn`` uniform draws, not the layer."""
        import pandas as pd

        frame = solution_count_frame(self.results, row)
        if row is None:
            return frame
        (layer,) = [c for c in self.results["solution_counts"] if c["pieces"] == row]
        series = pd.Series(dict(zip(frame["solutions"], frame["boards"])), name="boards").rename_axis("solutions")
        series.attrs.update({k: v for k, v in layer.items() if k in ("exact", "drawn", "seed")})
        return series

    def ratio_histogram(self, pieces: int | None = None):
        """How many uniquely solvable boards (every board, mirror images included, as ``boards()`` lists them) of
        layer ``pieces`` fall in each expert-ratio bin (a pandas Series
        indexed by the bin's lower edge, bins 0.1 wide), or every layer's as a DataFrame (``pieces``, ``ratio``,
        ``boards``, ``exact``). Every uniquely solvable board is counted, or, if the job sets ``ratio_sample``, in
        a layer of more than that many boards those of a random sample of its blocks (results.json's
        ``ratio_histograms`` give its ``fraction``)."""
        import pandas as pd

        frame = ratio_frame(self.results, pieces)
        if pieces is None:
            return frame
        return pd.Series(dict(zip(frame["ratio"], frame["boards"])), name="boards").rename_axis("ratio")

    def best_boards(self, distinct: str = "patterns") -> list[FlingBoard]:
        """The boards the run ranked best by expert ratio, by (ratio desc, rank asc): ``distinct="patterns"``
        (results.json's ``puzzles``) one board per pattern, the pattern's board of lowest rank, its ``copies``
        the boards it stands for (:mod:`~epcg.games.fling.domain.patterns`); ``"orbits"`` one board per orbit,
        its ``orbit_size`` the boards it stands for; ``"boards"`` every board of those orbits. A run made
        before patterns were kept lists orbits only: its patterns are those among them."""
        check_distinct(distinct)
        c = self.config
        results = self.results
        puzzles = [FlingBoard(c.width, c.height, c.max_pieces, p["rank"]) for p in results.get("puzzles", [])]
        if "best_orbits" not in results:
            return list(first_of_each_pattern(iter(puzzles))) if distinct == "patterns" else \
                puzzles if distinct == "orbits" else [b for p in puzzles for b in _orbit(p)]
        if distinct == "patterns":
            return puzzles
        orbits = [FlingBoard(c.width, c.height, c.max_pieces, r) for r in results["best_orbits"]]
        return orbits if distinct == "orbits" else [b for p in orbits for b in _orbit(p)]

    def top(self) -> TopRatio | None:
        """The highest expert ratio of the deepest layer and how many boards and orbits share it (None for a run
        that did not evaluate it, or one made before this was recorded). ``str()`` of it is the sentence
        summary.md and report.html print, such as "264 boards, 66 up to symmetry, share the top ratio 8.478"."""
        tie = self.results.get("top_tie")
        return TopRatio(**tie) if tie else None

    def probe(self, puzzle: str) -> Probe:
        """What the run knows of one board: ``"a1 f2 c3 f4 c5 f7 a8"`` (its pieces' cells) or its picture (rows of
        ``o`` and ``.``, by newlines or ``/``): solvable and uniquely (from the stored layer), its solution count,
        expert ratio, rank, orbit and pattern, whether the run kept it, its solutions drawn
        (:mod:`~epcg.games.fling.probe`)."""
        from epcg.games.fling.probe import probe

        return probe(self, puzzle)

    # -- report.html ------------------------------------------------------------

    def gallery(self, items: int) -> list[Group]:
        """The best boards, then per layer a sample of its uniquely solvable boards (and a third with several)."""
        c = self.config
        layers = self.results["rows"]
        n = share(items, len(layers) + 1)
        out = []
        best = self.best_boards()
        if best:
            tie = self.top()
            per = "pattern" if "best_orbits" in self.results else "orbit"
            name = f"best {len(best)} by expert ratio, {c.max_pieces} pieces, one board per {per}"
            out.append(Group(name + (f" ({tie})" if tie and tie.boards > 1 else ""), len(best),
                             [_item(b, "best") for b in best[:n]], every=(_item(b, "best") for b in best)))
        for k in range(2, c.max_pieces + 1):
            for i, entry in enumerate(kept_bands(self.results, k)):
                if not entry["kept"]:
                    continue
                low = band_of(entry["band"])[0]
                ranks, ratios, _sizes = read_kept(self.stored, kept_name(k), i)
                boards = itertools.islice(self._expand(k, ranks, ratios, low, True), n)
                every = (_item(b, f"{k} pieces, kept") for b in self._expand(k, ranks, ratios, low, True))
                out.append(Group(f"{k} pieces, {band_text(band_of(entry['band']), 'expert ratio')} (kept): "
                                 f"{entry['boards']:,} boards, {entry['orbits']:,} up to symmetry, one per orbit",
                                 entry["orbits"], [_item(b, f"{k} pieces, kept") for b in boards], every=every))
        for row in layers:
            k = row["pieces"]
            several = row["solvable"] - row["unique"]
            ranks = [(r, True) for r in sample_ranks(self.stored, k, True, n - n // 3)]
            ranks += [(r, False) for r in sample_ranks(self.stored, k, False, n // 3)] if several else []
            boards = [FlingBoard(c.width, c.height, k, r) for r, _ in ranks]
            out.append(Group(f"{k} piece{'' if k == 1 else 's'}: solvable boards, mirror images included", row["solvable"],
                             [_item(b, f"{k} pieces") for b in boards], every=self._every_solvable(k)))
        return out

    def _every_solvable(self, k: int) -> Iterator[Item]:
        """Gallery items of every solvable board of layer ``k``, made as they are read (in rank order; in a layer
        stored one board per orbit, each orbit's boards together), each board's solution count from the stored
        bits and its ratio computed once per orbit."""
        c = self.config
        whole = not orbits_only(self.stored, k)
        for rank, unique in solvable_ranks(self.stored, k):
            board = FlingBoard(c.width, c.height, k, rank)
            board.__dict__["solution_count"] = 1 if unique else 2
            yield _item(board, f"{k} pieces")
            if not whole:
                yield from (_item(_mirror(board, r), f"{k} pieces")
                            for r in orbit_ranks(c.width, c.height, k, rank) if r != rank)

    def plots(self, groups: list[Group]) -> list[tuple[str, bytes]]:
        """Boards by number of solutions per piece count and, for runs without the exact ratio histograms (which
        the report's figures show), the expert ratios of the gallery's sample."""
        rows = self.results["rows"]
        pieces = [r["pieces"] for r in rows]
        unique = np.array([r["unique"] for r in rows], float)
        several = np.array([r["solvable"] - r["unique"] for r in rows], float)
        none = np.array([r["boards"] - r["solvable"] for r in rows], float)
        fig, ax = plot_axes()
        width = 0.27
        x = np.arange(len(pieces))
        for shift, values, label, colour in ((-width, none, "no solution", "#bf616a"),
                                             (0, unique, "one solution", "#a3be8c"),
                                             (width, several, "several solutions", "#5e81ac")):
            ax.bar(x + shift, np.where(values > 0, values, np.nan), width, label=label, color=colour)
        ax.set_xticks(x, [str(p) for p in pieces])
        ax.set_yscale("log")
        ax.set_xlabel("pieces")
        ax.set_ylabel("boards")
        ax.legend(fontsize=8)
        ax.set_title("boards by number of solutions, per piece count")
        out = [("boards by number of solutions per piece count", png_bytes(fig))]
        ratios = [i.attrs["ratio"] for g in groups for i in g.items if i.attrs["ratio"] != ""]
        if ratios and not self.results.get("ratio_histograms"):
            fig, ax = plot_axes()
            ax.hist(ratios, bins=20, color="#d08770")
            ax.set_xlabel("expert ratio (brute-force nodes / expert nodes)")
            ax.set_ylabel("boards")
            title = f"expert ratios of the {len(ratios)} uniquely solvable boards in the gallery sample"
            ax.set_title(title, fontsize=9)
            out.append((title, png_bytes(fig)))
        return out


DISTINCT = ("patterns", "orbits", "boards")
"""What ``distinct=`` may ask for: one board per pattern, one per orbit, or every board."""


def check_distinct(distinct: str | None) -> None:
    """Refuse a ``distinct`` that is not one of :data:`DISTINCT` (or None, every board)."""
    if distinct is not None and distinct not in DISTINCT:
        raise InvalidValue(f"distinct must be one of {', '.join(DISTINCT)}, got {distinct!r}")


def first_of_each_pattern(boards: Iterator[FlingBoard]) -> Iterator[FlingBoard]:
    """The first board of each pattern among ``boards``."""
    seen: set[tuple[int, str]] = set()
    for board in boards:
        key = (board.pieces, board.pattern.key)
        if key not in seen:
            seen.add(key)
            yield board


def _orbit(board: FlingBoard) -> list[FlingBoard]:
    """Every board of ``board``'s orbit, ``board`` first."""
    return [board] + [_mirror(board, r) for r in orbit_ranks(board.width, board.height, board.pieces, board.rank)
                      if r != board.rank]


def none_as_high(results: dict[str, Any], k: int, min_ratio: float) -> bool:
    """Whether layer ``k``'s exact ratio histogram has no board in a bin that may hold ratios of ``min_ratio`` or
    more (bins are ``floor(ratio / bin_width)``), so that nothing need be recomputed to know there is none."""
    for h in results.get("ratio_histograms") or []:
        if h["pieces"] == k and h.get("exact", True):
            first = math.floor(min_ratio / h["bin_width"] - 1e-9)
            return not any(n for i, n in h["counts"].items() if int(i) >= first)
    return False


def _mirror(board: FlingBoard, rank: int) -> FlingBoard:
    """The board of ``rank`` in ``board``'s orbit, sharing the solution count and search trees already computed
    (a mirror image or turn has the same)."""
    image = FlingBoard(board.width, board.height, board.pieces, rank)
    image.__dict__.update({k: v for k, v in board.__dict__.items() if k in ("solution_count", "_trees", "orbit_size")})
    return image


def _item(board: FlingBoard, group: str) -> Item:
    ratio = board.ratio
    return Item(board, group, {"pieces": board.pieces, "unique": "yes" if board.unique else "no",
                               "ratio": round(ratio, 3) if ratio is not None else "",
                               "boards": board.orbit_size})
