"""Fling! (Sturtevant 2013): rules, retrograde layer kernels, expert evaluator, pictures.

The retrograde driver calls the pure functions of
:mod:`~epcg.domains.fling.retrograde` on word ranges of each layer; this
package never imports Dask or Zarr.
"""

from epcg.domains.fling.evaluate import Evaluation, evaluate, top_puzzles, tree_sizes
from epcg.domains.fling.retrograde import first_layer, layer_size, layer_words, solve_words
from epcg.domains.fling.rules import Board, Move

__all__ = [
    "Board",
    "Evaluation",
    "Move",
    "evaluate",
    "first_layer",
    "layer_size",
    "layer_words",
    "solve_words",
    "top_puzzles",
    "tree_sizes",
]
