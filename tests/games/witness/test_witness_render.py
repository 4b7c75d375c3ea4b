"""Pictures of Witness panels: figures build, files are written, bad input is refused."""

from __future__ import annotations

import re

import pytest
from matplotlib.figure import Figure

from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.render import (
    MARGIN,
    PAIR_GAP,
    PuzzleView,
    draw_puzzle,
    gallery_figure,
    puzzle_figure,
    save_figure,
)

SIZES = [(w, h) for w in range(2, 6) for h in range(2, 6)]


def l_path(g: Geometry) -> list[int]:
    """Up the left side, then right along the top."""
    return [g.vertex(0, y) for y in range(g.height + 1)] + [
        g.vertex(x, g.height) for x in range(1, g.width + 1)
    ]


def some_puzzle(g: Geometry) -> dict:
    """Three must-cross positions (a vertex, a horizontal and a vertical edge), two squares."""
    v = g.num_vertices
    return dict(
        cross=[g.vertex(1, 1), v + 0, v + g.num_horizontal_edges],
        cells=[0, g.num_cells - 1],
        colours=[0, 1],
    )


def gids(fig: Figure, kind: str) -> list[str]:
    """SVG ids of the artists of one kind ('cross', 'cell', 'path', 'panel')."""
    return sorted(
        a.get_gid()
        for a in fig.axes[0].get_children()
        if a.get_gid() and re.search(rf"-{kind}(-|$)", a.get_gid())
    )


@pytest.mark.parametrize("w,h", SIZES)
def test_puzzle_figure_builds_for_every_size(w, h):
    g = Geometry(w, h)
    pz = some_puzzle(g)
    fig = puzzle_figure(g, **pz, path=l_path(g), caption=f"{w}x{h}")
    assert len(gids(fig, "panel")) == 2
    assert len(gids(fig, "cross")) == 2 * 3
    assert len(gids(fig, "cell")) == 2 * 2
    assert gids(fig, "path") == ["solution-path"]
    fig.canvas.draw()  # renders without error


def test_path_drawn_only_when_given():
    g = Geometry(3, 3)
    bare = puzzle_figure(g, **some_puzzle(g))
    assert gids(bare, "panel") == ["puzzle-panel"]
    assert gids(bare, "path") == []
    solved = puzzle_figure(g, **some_puzzle(g), path=l_path(g))
    assert gids(solved, "panel") == ["puzzle-panel", "solution-panel"]
    assert gids(solved, "path") == ["solution-path"]


def test_constraints_sit_where_the_geometry_says():
    g = Geometry(3, 3)  # 16 vertices; edge 12 is the vertical edge (0,0)-(0,1)
    fig = Figure()
    ax = fig.add_subplot()
    draw_puzzle(ax, g, cross=[9, 16 + 2, 16 + 12], cells=[5], colours=[1], title="t")
    centres = {
        a.get_gid(): tuple(round(c - MARGIN, 6) for c in a.xy)
        for a in ax.patches
        if "-cross-" in (a.get_gid() or "")
    }
    assert centres == {
        "ax0-cross-9": (1.0, 2.0),  # vertex (1, 2)
        "ax0-cross-18": (2.5, 0.0),  # horizontal edge (2,0)-(3,0)
        "ax0-cross-28": (0.0, 0.5),  # vertical edge (0,0)-(0,1)
    }
    (square,) = [a for a in ax.patches if (a.get_gid() or "").startswith("ax0-cell-")]
    assert square.get_gid() == "ax0-cell-5-white"
    x, y = square.get_x() + square.get_width() / 2, square.get_y() + square.get_height() / 2
    assert (round(x - MARGIN, 6), round(y - MARGIN, 6)) == (2.5, 1.5)  # cell (2, 1)
    assert ax.get_title() == "t"


def test_path_covers_every_step():
    g = Geometry(3, 2)
    path = [0, 4, 5, 1, 2, 3, 7, 11]  # up, right, down, right, right, up, up
    fig = puzzle_figure(g, path=path, legend=False)  # the panels sit at y = 0
    (coll,) = [c for c in fig.axes[0].collections if c.get_gid() == "solution-path"]
    ox = g.width + 2 * MARGIN + PAIR_GAP + MARGIN  # grid origin of the solution panel
    assert coll.get_paths()  # in data coordinates: bars and discs
    for a, b in zip(path, path[1:]):
        (ax, ay), (bx, by) = g.vertex_xy(a), g.vertex_xy(b)
        mid = (ox + (ax + bx) / 2, MARGIN + (ay + by) / 2)
        assert any(p.contains_point(mid) for p in coll.get_paths()), (a, b)
    off = (ox + 1.5, MARGIN + 0.5)  # centre of cell (1, 0): not on the path
    assert not any(p.contains_point(off) for p in coll.get_paths())


def test_save_writes_svg_and_png(tmp_path):
    g = Geometry(4, 4)
    fig = puzzle_figure(g, **some_puzzle(g), path=l_path(g), caption="rank 1 · 8 edges")
    svg, png = save_figure(fig, tmp_path / "sub" / "one")
    assert (svg.name, png.name) == ("one.svg", "one.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert len(re.findall(r'id="[a-z]+-cross-\d+"', text)) == 6
    assert len(re.findall(r'id="[a-z]+-cell-\d+-(?:black|white)"', text)) == 4
    assert text.count('id="solution-path"') == 1
    assert fig.axes == []  # closed


def test_svg_is_deterministic(tmp_path):
    g = Geometry(2, 3)
    a = save_figure(puzzle_figure(g, **some_puzzle(g), path=l_path(g)), tmp_path / "a")[0]
    b = save_figure(puzzle_figure(g, **some_puzzle(g), path=l_path(g)), tmp_path / "b")[0]
    assert a.read_bytes() == b.read_bytes()


def test_gallery(tmp_path):
    g = Geometry(3, 4)
    views = [
        PuzzleView(
            cross=[i % g.num_positions],
            cells=[i % g.num_cells],
            colours=[i % 2],
            path=l_path(g) if i % 3 else None,
            caption=f"rank {i} · 7 edges",
        )
        for i in range(24)
    ]
    fig = gallery_figure(g, views, columns=4, title="3x4")
    with_path = sum(1 for v in views if v.path is not None)
    assert len(gids(fig, "panel")) == 24 + with_path
    assert len(gids(fig, "path")) == with_path
    assert len(gids(fig, "cross")) == 24 + with_path
    svg, _ = save_figure(fig, tmp_path / "gallery")
    text = svg.read_text()
    assert len(re.findall(r'id="p\d+-(?:puzzle|solution)-cross-\d+"', text)) == 24 + with_path


BAD = [
    (dict(cross=[40]), "must-cross position 40 is out of range for a 3x3 board (0..39)"),
    (dict(cross=[-1]), "must-cross position -1 is out of range"),
    (dict(cross=[3, 3]), "must-cross positions repeat"),
    (dict(cross=[1.5]), "cross must be a sequence of integers"),
    (dict(cells=[9], colours=[0]), "cell 9 is out of range for a 3x3 board (0..8)"),
    (dict(cells=[1, 2], colours=[0]), "2 cells but 1 colours"),
    (dict(cells=[1], colours=[2]), "colours must be 0 (black) or 1 (white)"),
    (dict(path=[0, 1, 2, 3, 7, 11, 16]), "path vertex 16 is out of range"),
    (dict(path=[0, 1, 2, 3, 7, 11]), "path must run from vertex 0 to vertex 15"),
    (dict(path=[]), "path must run from vertex 0 to vertex 15"),
    (dict(path=[0, 5, 6, 7, 11, 15]), "from vertex 0 to vertex 5, which are not neighbours"),
    (dict(path=[0, 1, 0, 4, 8, 12, 13, 14, 15]), "path visits a vertex twice"),
]


@pytest.mark.parametrize("kwargs,message", BAD)
def test_bad_input_raises(kwargs, message):
    g = Geometry(3, 3)
    with pytest.raises(ValueError, match=re.escape(message)):
        puzzle_figure(g, **kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        draw_puzzle(Figure().add_subplot(), g, **kwargs)


def test_gallery_names_the_bad_entry():
    g = Geometry(2, 2)
    views = [PuzzleView(cross=[0]), PuzzleView(cross=[99])]
    with pytest.raises(ValueError, match=r"gallery entry 1: must-cross position 99"):
        gallery_figure(g, views)
    with pytest.raises(ValueError, match="at least one puzzle"):
        gallery_figure(g, [])
    with pytest.raises(ValueError, match="columns must be at least 1"):
        gallery_figure(g, views[:1], columns=0)


def test_every_solution_gets_its_panel_and_every_picture_a_legend():
    g = Geometry(2, 2)
    right_then_up = [g.vertex(x, 0) for x in range(3)] + [g.vertex(2, y) for y in (1, 2)]
    fig = puzzle_figure(g, path=l_path(g), more_paths=[right_then_up], caption="two")
    assert gids(fig, "path") == ["solution-path", "solution2-path"]
    assert gids(fig, "panel") == ["puzzle-panel", "solution-panel", "solution2-panel"]
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "solution 1 of 2" in texts and "solution 2 of 2" in texts
    assert any(t.startswith("circle: start (0,0), bottom left") for t in texts)
    with pytest.raises(ValueError):
        puzzle_figure(g, path=l_path(g), more_paths=[[0, 5]])  # not a path
    gallery = gallery_figure(g, [PuzzleView(cross=[1], path=l_path(g), caption="c")], title="t")
    legend = [t.get_text() for t in gallery.axes[0].texts if "circle: start" in t.get_text()]
    assert legend and "hexagon: the path must cross it" in legend[0]
