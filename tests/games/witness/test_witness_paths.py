"""Witness paths: Table 1 counts, and the numba enumeration against the recursive reference."""

from __future__ import annotations

import numpy as np
import pytest

from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import moves, paths_for

from tests.reference import witness as ref

# Table 1 of Sturtevant (2019), "Exploring EPCG in The Witness" (height x width).
TABLE_1 = [(2, 2, 12), (2, 3, 38), (3, 3, 184), (3, 4, 976), (4, 4, 8_512), (4, 5, 79_384)]


@pytest.mark.parametrize(("height", "width", "count"), TABLE_1)
def test_table_1(height: int, width: int, count: int) -> None:
    assert len(paths_for(width, height)) == count
    assert len(paths_for(height, width)) == count


@pytest.mark.slow
def test_table_1_5x5() -> None:
    assert len(paths_for(5, 5)) == 1_262_816


@pytest.mark.parametrize(("width", "height"), [(1, 1), (1, 3), (2, 2), (3, 2), (2, 3), (3, 3), (4, 3)])
def test_paths_match_reference(width: int, height: int) -> None:
    ps = paths_for(width, height)
    g = ps.geometry
    expected = sorted(ref.all_paths(width, height), key=lambda p: -len(p))  # stable: DFS order within a length
    assert len(ps) == len(expected)
    for i, path in enumerate(expected):
        vertices = tuple(g.vertex(x, y) for x, y in path)
        assert ps.path(i) == vertices
        assert int(ps.length[i]) == len(path) - 1
        assert int(ps.vertex_mask[i]) == sum(1 << v for v in vertices)
        assert set(ps.crosses(i)) == ref.positions(width, height, path)
        lab = ref.regions(width, height, path)
        ours = ps.regions[i].tolist()
        assert [[a == b for b in lab] for a in lab] == [[a == b for b in ours] for a in ours]
        assert ours[0] == 0 and max(ours) + 1 == len(set(lab))  # labels 0.. in order of lowest cell


def test_pathset_order_and_readonly() -> None:
    ps = paths_for(3, 4)
    assert np.all(np.diff(ps.length.astype(int)) <= 0)
    assert int(ps.length[0]) == 19  # a Hamiltonian path: 20 vertices
    assert paths_for(3, 4) is ps  # cached per process
    with pytest.raises(ValueError):
        ps.length[0] = 1


def test_moves() -> None:
    ps = paths_for(2, 2)
    g = Geometry(2, 2)
    for i in range(len(ps)):
        m = ps.moves(i)
        assert len(m) == ps.length[i] and m.count("R") - m.count("L") == 2 and m.count("U") - m.count("D") == 2
        assert moves(g, ps.path(i)) == m
    assert ps.moves(len(ps) - 1) == "UURR"


def test_bitsets_match_masks() -> None:
    ps = paths_for(3, 3)
    b = bitsets_for(3, 3)
    def members(row: np.ndarray) -> set[int]:
        return {s for s in range(b.num_paths) if (int(row[s // 64]) >> (s % 64)) & 1}
    for p in range(ps.geometry.num_positions):
        assert members(b.cross[p]) == {s for s in range(len(ps)) if p in ps.crosses(s)}
    for a in range(9):
        for c in range(a + 1, 9):
            expected = {s for s in range(len(ps)) if ps.regions[s, a] != ps.regions[s, c]}
            assert members(b.separated[b.pair_index[a, c]]) == expected
