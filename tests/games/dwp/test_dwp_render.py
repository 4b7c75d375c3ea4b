"""Map pictures and box plots are written as SVG and PNG."""

import numpy as np
import pytest

from epcg.games.dwp.domain.maps import MapRules, build_map
from epcg.games.dwp.domain.render import box_plot, map_figure, save_figure
from epcg.games.dwp.domain.sda import random_sda


def test_map_and_box_plot_files(tmp_path):
    rules = MapRules(grid=(40, 40), max_rooms=60, obstacles=((0, 0, 6, 6),))
    m = build_map(random_sda(8, np.random.default_rng(0)), rules)
    paths = save_figure(map_figure(m.grid, m.rooms, title="map"), tmp_path / "maps" / "one")
    assert [p.suffix for p in paths] == [".svg", ".png"] and all(p.stat().st_size > 1000 for p in paths)
    fig = box_plot({2: [1.0, 2.0, 3.0], 1: [2.0, 2.5]})
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1", "2"]
    assert all(p.exists() for p in save_figure(fig, tmp_path / "box"))
    with pytest.raises(ValueError):
        box_plot({})
