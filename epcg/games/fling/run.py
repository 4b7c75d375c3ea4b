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

from epcg.api.runs import Run, is_int
from epcg.games.fling.evaluation import kept_name
from epcg.games.fling.found import (
    FlingBoard,
    TopRatio,
    orbit_ranks,
    orbits_only,
    ratio_frame,
    sample_ranks,
    set_ranks,
    solution_count_frame,
)
from epcg.kinds.keep import MAX_KEPT, band_of, band_text, covering, read_kept
from epcg.report.gallery import Group, Item, plot_axes, share
from epcg.report.pictures import png_bytes
from epcg.runtime.errors import InvalidValue


class FlingRun(Run):
    """A Fling! run: ``boards()`` of any layer, ``best_boards()``, the ratio and solution-count distributions."""

    FOUND = "boards"
    NOTATION = "\n".join([
        "- A board: columns `a`, `b`, … from the left, rows `1`, `2`, … from the top; `o` a piece, `.` empty. "
        "A move such as `f5L` flings the piece in column f, row 5, to the left (`R` right, `U` up, `D` down); a "
        "solution is its moves in order, down to one piece.",
        "- `ratio`: the expert ratio, brute-force search-tree nodes / expert search-tree nodes (high: hard for a "
        "solver that tries every move, easy for one that sees which moves matter).",
        "- Every count is of **boards**, mirror images included. A board's *orbit* is the board with its mirror "
        "images and half turn (same solutions, same ratio); the best list shows one board per orbit, the one of "
        "lowest rank, and `boards` says how many boards it stands for. In Python: `boards(k, orbits=True)`; "
        "export: `--where orbits=true`.",
        "- Stages in `epcg plan` and `epcg status`: `k06` solves layer 6 (boards with 6 pieces); `f05` fills "
        "layer 5 from one board per orbit to every board; `top` scores the deepest layer (the best list and the "
        "tie at the top); `r05` the expert-ratio histogram of layer 5; `c06` the solution counts of layer 6. "
        "More: docs/notation.md.",
    ])
    found_types = (FlingBoard,)
    FILTERS = (("pieces", "pieces", "select"), ("unique", "uniquely solvable", "select"),
               ("ratio", "expert ratio at least", "min"))

    def boards(self, pieces: int | None = None, *, unique: bool | None = True,
               min_ratio: float | None = None, orbits: bool = False) -> Iterator[FlingBoard]:
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
        return self._boards([pieces] if pieces is not None else range(1, top + 1), unique, min_ratio, orbits)

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

    def best_boards(self) -> list[FlingBoard]:
        """The boards the run ranked best by expert ratio (results.json's ``puzzles``): distinct orbits, each the
        orbit's board of lowest rank, its ``orbit_size`` the boards it stands for."""
        c = self.config
        return [FlingBoard(c.width, c.height, c.max_pieces, p["rank"]) for p in self.results.get("puzzles", [])]

    def top(self) -> TopRatio | None:
        """The highest expert ratio of the deepest layer and how many boards and orbits share it (None for a run
        that did not evaluate it, or one made before this was recorded). ``str()`` of it is the sentence
        summary.md and report.html print, such as "264 boards, 66 up to symmetry, share the top ratio 8.478"."""
        tie = self.results.get("top_tie")
        return TopRatio(**tie) if tie else None

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
            name = f"best {len(best)} by expert ratio, {c.max_pieces} pieces, one board per orbit"
            out.append(Group(name + (f" ({tie})" if tie and tie.boards > 1 else ""), len(best),
                             [_item(b, "best") for b in best[:n]]))
        for k in range(2, c.max_pieces + 1):
            for i, entry in enumerate(kept_bands(self.results, k)):
                if not entry["kept"]:
                    continue
                low = band_of(entry["band"])[0]
                ranks, ratios, _sizes = read_kept(self.stored, kept_name(k), i)
                boards = itertools.islice(self._expand(k, ranks, ratios, low, True), n)
                out.append(Group(f"{k} pieces, {band_text(band_of(entry['band']), 'expert ratio')} (kept): "
                                 f"{entry['boards']:,} boards, {entry['orbits']:,} up to symmetry, one per orbit",
                                 entry["orbits"], [_item(b, f"{k} pieces, kept") for b in boards]))
        for row in layers:
            k = row["pieces"]
            several = row["solvable"] - row["unique"]
            ranks = [(r, True) for r in sample_ranks(self.stored, k, True, n - n // 3)]
            ranks += [(r, False) for r in sample_ranks(self.stored, k, False, n // 3)] if several else []
            boards = [FlingBoard(c.width, c.height, k, r) for r, _ in ranks]
            out.append(Group(f"{k} piece{'' if k == 1 else 's'}: solvable boards, mirror images included", row["solvable"],
                             [_item(b, f"{k} pieces") for b in boards]))
        return out

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


def none_as_high(results: dict[str, Any], k: int, min_ratio: float) -> bool:
    """Whether layer ``k``'s exact ratio histogram has no board in a bin that may hold ratios of ``min_ratio`` or
    more (bins are ``floor(ratio / bin_width)``), so that nothing need be recomputed to know there is none."""
    for h in results.get("ratio_histograms") or []:
        if h["pieces"] == k and h.get("exact", True):
            first = math.floor(min_ratio / h["bin_width"] - 1e-9)
            return not any(n for i, n in h["counts"].items() if int(i) >= first)
    return False


def kept_bands(results: dict[str, Any], k: int) -> list[dict[str, Any]]:
    """results.json's kept bands of layer ``k``, in the job's order (band ``i`` is stored under ``kept/i``)."""
    return [entry for entry in results.get("kept") or [] if entry["pieces"] == k]


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
