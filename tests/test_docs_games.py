"""docs/games.md: every picture it shows is there, and the project's renderers draw them again alike."""

from __future__ import annotations

import importlib.util
import re

import pytest
from matplotlib.image import imread

from .conftest import ROOT

DOCS = ROOT / "docs"


def _pictures() -> list[str]:
    return re.findall(r"!\[[^]]*\]\((games/[\w-]+\.png)\)", (DOCS / "games.md").read_text())


def test_every_picture_is_committed_and_each_game_has_one() -> None:
    pictures = _pictures()
    assert {p.split("/")[1].split("-")[0].removesuffix(".png") for p in pictures} == {"fling", "witness", "dwp"}
    assert all((DOCS / p).stat().st_size > 1000 for p in pictures)


@pytest.mark.slow
def test_the_script_draws_the_same_pictures(tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("pictures", DOCS / "games" / "pictures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    drawn = module.main(tmp_path)
    assert sorted(f"games/{p.name}" for p in drawn) == sorted(_pictures())
    for path in drawn:
        assert imread(path).shape == imread(DOCS / "games" / path.name).shape
