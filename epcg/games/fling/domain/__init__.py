"""Fling! (Sturtevant 2013): rules, retrograde layer kernels, expert evaluator, pictures.

The retrograde driver calls the pure functions of
:mod:`~epcg.games.fling.domain.layers` on word ranges of each layer; this
package never imports Dask or Zarr. (The module ``evaluate`` is not shadowed
by a function of the same name here: use ``evaluate.evaluate``.)
"""

from epcg.games.fling.domain.evaluate import Evaluation, top_puzzles, tree_sizes
from epcg.games.fling.domain.layers import first_layer, layer_size, layer_words, solve_words
from epcg.games.fling.domain.rules import Board, Move

__all__ = [
    "Board",
    "Evaluation",
    "Move",
    "first_layer",
    "layer_size",
    "layer_words",
    "solve_words",
    "top_puzzles",
    "tree_sizes",
]
