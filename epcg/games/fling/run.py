"""A Fling! run as a Python object: its boards layer by layer, its distributions, and its part of report.html.

>>> FlingRun.FOUND, [t.__name__ for t in FlingRun.found_types]
('boards', ['FlingBoard'])
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator

import numpy as np

from epcg.api.runs import Run, is_int
from epcg.games.fling.found import FlingBoard, ratio_frame, sample_ranks, set_ranks, solution_count_frame
from epcg.report.gallery import Group, Item, plot_axes, share
from epcg.report.pictures import png_bytes
from epcg.runtime.errors import InvalidValue


class FlingRun(Run):
    """A Fling! run: ``boards()`` of any layer, ``best_boards()``, the ratio and solution-count distributions."""

    FOUND = "boards"
    found_types = (FlingBoard,)
    FILTERS = (("pieces", "pieces", "select"), ("unique", "uniquely solvable", "select"),
               ("ratio", "expert ratio at least", "min"))

    def boards(self, pieces: int | None = None, *, unique: bool | None = True,
               min_ratio: float | None = None) -> Iterator[FlingBoard]:
        """Fling! boards in rank order, layer by layer (or only layer ``pieces``).

        ``unique``: True for the uniquely solvable boards, False for those with
        several solutions, None for every solvable board. ``min_ratio`` keeps
        boards whose expert ratio is at least that (computed board by board).
        """
        top = self.config.max_pieces
        if pieces is not None and not (is_int(pieces) and 1 <= pieces <= top):
            raise InvalidValue(f"pieces must be a piece count 1..{top} (this run's layers), got {pieces!r}")
        if unique not in (True, False, None):
            raise InvalidValue(f"unique must be True, False or None, got {unique!r}")
        if min_ratio is not None and (isinstance(min_ratio, (bool, np.bool_)) or not isinstance(min_ratio, numbers.Real)
                                      or math.isnan(min_ratio)):
            raise InvalidValue(f"min_ratio must be a number (an expert ratio), got {min_ratio!r}")
        return self._boards([pieces] if pieces is not None else range(1, top + 1), unique, min_ratio)

    def _boards(self, layers: Iterable[int], unique: bool | None, min_ratio: float | None) -> Iterator[FlingBoard]:
        for k in layers:
            for rank in set_ranks(self.stored, k, unique):
                board = FlingBoard(self.config.width, self.config.height, k, rank)
                if min_ratio is not None and (board.ratio is None or board.ratio < min_ratio):
                    continue
                yield board

    def solution_counts(self, row: int | None = None):
        """How many solvable boards of layer ``row`` (a piece count) have each number of solutions (a pandas
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
        """How many uniquely solvable boards of layer ``pieces`` fall in each expert-ratio bin (a pandas Series
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
        """The boards the run ranked best by expert ratio (results.json's ``puzzles``)."""
        c = self.config
        return [FlingBoard(c.width, c.height, c.max_pieces, p["rank"]) for p in self.results.get("puzzles", [])]

    # -- report.html ------------------------------------------------------------

    def gallery(self, items: int) -> list[Group]:
        """The best boards, then per layer a sample of its uniquely solvable boards (and a third with several)."""
        c = self.config
        layers = self.results["rows"]
        n = share(items, len(layers) + 1)
        out = []
        best = self.best_boards()
        if best:
            out.append(Group(f"best {len(best)} by expert ratio, {c.max_pieces} pieces", len(best),
                             [_item(b, "best") for b in best[:n]]))
        for row in layers:
            k = row["pieces"]
            several = row["solvable"] - row["unique"]
            ranks = [(r, True) for r in sample_ranks(self.stored, k, True, n - n // 3)]
            ranks += [(r, False) for r in sample_ranks(self.stored, k, False, n // 3)] if several else []
            boards = [FlingBoard(c.width, c.height, k, r) for r, _ in ranks]
            out.append(Group(f"{k} pieces", row["solvable"], [_item(b, f"{k} pieces") for b in boards]))
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


def _item(board: FlingBoard, group: str) -> Item:
    ratio = board.ratio
    return Item(board, group, {"pieces": board.pieces, "unique": "yes" if board.unique else "no",
                               "ratio": round(ratio, 3) if ratio is not None else ""})
