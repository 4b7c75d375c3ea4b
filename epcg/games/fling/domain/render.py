"""Pictures of Fling! puzzles in the style of the paper's Figure 1(c).

The board is a grid (row ``y = 0`` at the top, columns ``a, b, ...`` and
rows ``1, 2, ...`` labelled as in :meth:`Board.move_name`); pieces are
circles labelled with the number of the solution move in which the player
first flings them (pieces that are only knocked on, or never moved, stay
blank); each solution move is a numbered arrow from the flung piece to where it
stops, and a dashed arrow from the piece it knocks off the board over the
board's edge; the move list is written beside the board. Figures are
:class:`matplotlib.figure.Figure` on an Agg canvas: no pyplot, no display.

>>> from epcg.games.fling.domain.rules import Board
>>> b = Board.parse("o..o...")
>>> fig = puzzle_figure(b, [b.parse_move("a1R")], title="two pieces")
>>> len(fig.axes)
1
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, Rectangle

from epcg.games.fling.domain.moves import DX, DY
from epcg.games.fling.domain.rules import Board, Move
from epcg.report.figures import save_figure

__all__ = ["flight_paths", "leaving", "puzzle_figure", "save_figure", "text_strip"]

BOARD_COLOUR = "#2e7d32"
GRID_COLOUR = "#a5d6a7"
PIECE_COLOUR = "#ffca28"
PIECE_EDGE = "#5d4037"
ARROW_COLOUR = "#d32f2f"
TEXT_COLOUR = "#222222"
CELL = 0.9  # inches per cell


def flight_paths(board: Board, solution: Sequence[Move]) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """Follow pieces through ``solution``.

    Returns ``first``: initial cell -> number (from 1) of the move that first
    flings the piece starting there, and ``paths``: for each move, the cell
    the flung piece leaves and the cell where it stops.

    >>> b = Board.parse("o.o.o..")
    >>> flight_paths(b, [Move(0, 0)])
    ({0: 1}, [(0, 1)])
    """
    first, paths, _ = _follow(board, solution)
    return first, paths


def leaving(board: Board, solution: Sequence[Move]) -> list[int]:
    """For each move of ``solution``, the cell (before that move) of the piece it knocks off the board: the last
    piece along the flung piece's line.

    >>> leaving(Board.parse("o.o.o.."), [Move(0, 0)])
    [4]
    """
    return _follow(board, solution)[2]


def _follow(board: Board, solution: Sequence[Move]) -> tuple[dict[int, int], list[tuple[int, int]], list[int]]:
    w, h = board.width, board.height
    where = {c: c for c in board.cells()}  # current cell -> initial cell of the piece on it
    first: dict[int, int] = {}
    paths, leaves = [], []
    bits = board.bits
    for number, move in enumerate(solution, start=1):
        after = Board(w, h, bits).result_bits(move)
        if not after:
            raise ValueError(f"move {number} ({move}) is illegal")
        first.setdefault(where[move.cell], number)
        dx, dy = int(DX[move.direction]), int(DY[move.direction])
        moving, x, y = where.pop(move.cell), move.cell % w, move.cell // w
        stop, last = None, move.cell
        while True:
            while 0 <= x + dx < w and 0 <= y + dy < h and (y + dy) * w + x + dx not in where:
                x, y = x + dx, y + dy
            if not (0 <= x + dx < w and 0 <= y + dy < h):
                break  # off the board
            where[y * w + x] = moving
            stop = y * w + x if stop is None else stop
            x, y = x + dx, y + dy
            while 0 <= x + dx < w and 0 <= y + dy < h and (y + dy) * w + x + dx in where:
                x, y = x + dx, y + dy
            last = y * w + x
            moving = where.pop(last)
        paths.append((move.cell, stop))
        leaves.append(last)
        bits = after
    return first, paths, leaves


LEGEND = ("how to read it\n"
          "f5L: the piece in column f,\n row 5 (from the top),\n flung left (R U D)\n"
          "number on a piece: the move\n that flings it first\n"
          "red arrows: the moves in order\n"
          "dashed arrows: the piece each\n move knocks off the board")
"""The legend beside a solved board."""


def _off_the_board(ax, w: int, h: int, cell: int, direction: int, number: int) -> None:
    """A dashed arrow from ``cell`` over the board's edge: the piece move ``number`` knocks off."""
    dx, dy = int(DX[direction]), int(DY[direction])
    sx, sy = cell % w + 0.5, cell // w + 0.5
    tx = w + 0.45 if dx > 0 else -0.45 if dx < 0 else sx
    ty = h + 0.45 if dy > 0 else -0.45 if dy < 0 else sy
    off = -0.12 - 0.1 * ((number - 1) % 3)
    ox, oy = (0.0, off) if dy == 0 else (off, 0.0)
    ax.add_patch(FancyArrowPatch((sx + ox, sy + oy), (tx + ox, ty + oy), arrowstyle="-|>", mutation_scale=14,
                                 lw=1.8, linestyle=(0, (3, 2)), color=ARROW_COLOUR, alpha=0.9, shrinkA=6, shrinkB=0,
                                 gid=f"off-{number}"))


def puzzle_figure(board: Board, solution: Sequence[Move] | None = None, *,
                  title: str | None = None, arrows: bool = True) -> Figure:
    """The board, its pieces labelled by first-fling move number, and the solution."""
    w, h = board.width, board.height
    solution = list(solution or [])
    first, paths = flight_paths(board, solution)
    side = 2.2 if solution else 0.0
    fig = Figure(figsize=(CELL * w + 0.8 + side, CELL * h + 0.9 + (0.3 if title else 0)))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(-0.7, w + 0.1 + side / CELL)
    ax.set_ylim(h + 0.3, -0.6 - (0.35 if title else 0))
    ax.set_aspect("equal")
    ax.axis("off")
    ax.add_patch(Rectangle((0, 0), w, h, facecolor=BOARD_COLOUR, edgecolor="none", gid="board"))
    for x in range(w + 1):
        ax.plot([x, x], [0, h], color=GRID_COLOUR, lw=1)
    for y in range(h + 1):
        ax.plot([0, w], [y, y], color=GRID_COLOUR, lw=1)
    for x in range(w):
        ax.text(x + 0.5, -0.18, chr(ord("a") + x), ha="center", va="bottom", fontsize=11, color=TEXT_COLOUR)
    for y in range(h):
        ax.text(-0.15, y + 0.5, str(y + 1), ha="right", va="center", fontsize=11, color=TEXT_COLOUR)
    for c in board.cells():
        cx, cy = c % w + 0.5, c // w + 0.5
        ax.add_patch(Circle((cx, cy), 0.38, facecolor=PIECE_COLOUR, edgecolor=PIECE_EDGE, lw=2, gid=f"piece-{c}"))
        if c in first:
            ax.text(cx, cy, str(first[c]), ha="center", va="center", fontsize=15, fontweight="bold",
                    color=TEXT_COLOUR)
    if arrows:
        for number, (start, stop) in enumerate(paths, start=1):
            sx, sy = start % w + 0.5, start // w + 0.5
            tx, ty = stop % w + 0.5, stop // w + 0.5
            # offset arrows sideways, by move number, so arrows along one line stay apart
            off = 0.12 + 0.1 * ((number - 1) % 3)
            ox, oy = (0.0, off) if sy == ty else (off, 0.0)
            ax.add_patch(FancyArrowPatch((sx + ox, sy + oy), (tx + ox, ty + oy), arrowstyle="-|>",
                                         mutation_scale=16, lw=2.2, color=ARROW_COLOUR, alpha=0.85,
                                         shrinkA=6, shrinkB=2, gid=f"move-{number}"))
            ax.text((sx + tx) / 2 + ox, (sy + ty) / 2 + oy, str(number), ha="center", va="center",
                    fontsize=10, fontweight="bold", color="white",
                    bbox={"boxstyle": "circle,pad=0.2", "facecolor": ARROW_COLOUR, "edgecolor": "none"})
        for number, (move, cell) in enumerate(zip(solution, leaving(board, solution)), start=1):
            _off_the_board(ax, w, h, cell, move.direction, number)
    if solution:
        lines = [f"{i}. {board.move_name(m)}" for i, m in enumerate(solution, start=1)]
        ax.text(w + 0.35, 0.1, "solution\n" + "\n".join(lines), ha="left", va="top", fontsize=12,
                family="monospace", color=TEXT_COLOUR)
        ax.text(w + 0.35, h, LEGEND, ha="left", va="bottom", fontsize=8, color="#555555", linespacing=1.4)
    if title:
        # centred on the figure (x in axes units: the axes fill it), shrunk if wider than the figure
        label = ax.text(0.5, -0.65, title, ha="center", va="bottom", fontsize=13, color=TEXT_COLOUR,
                        transform=ax.get_yaxis_transform())
        width, room = label.get_window_extent(fig.canvas.get_renderer()).width, 0.97 * fig.bbox.width
        if width > room:
            label.set_fontsize(13 * room / width)
    return fig


def text_strip(board: Board, moves: Sequence[Move], per_line: int = 8) -> str:
    """``board`` and the position after each of ``moves`` side by side as text, ``per_line`` boards a line: ``o``
    a piece, ``*`` the piece flung next, ``.`` empty; each headed by the move about to be played.

    >>> b = Board.parse("o..o...")
    >>> print(text_strip(b, [b.parse_move("a1R")]))
    a1R      end
    *..o...  ..o....
    """
    frames, b = [], board.copy()
    for move in moves:
        rows = str(b).splitlines()
        y, x = divmod(move.cell, b.width)
        rows[y] = rows[y][:x] + "*" + rows[y][x + 1:]
        frames.append((b.move_name(move), rows))
        b.push(move)
    frames.append(("end", str(b).splitlines()))
    width = max(board.width, 4) + 2
    out = []
    for at in range(0, len(frames), per_line):
        row = frames[at:at + per_line]
        out.append("".join(name.ljust(width) for name, _ in row).rstrip())
        out += ["".join(lines[y].ljust(width) for _, lines in row).rstrip() for y in range(board.height)]
        out.append("")
    return "\n".join(out).rstrip()
