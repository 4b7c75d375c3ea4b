"""The paper's algorithms, domain-free, one module each.

- :mod:`epcg.search.scan`: Algorithm 1, a methodical scan of a :class:`ScanSpace`
  with exact, mergeable reductions (min with every rank at it, top-k, histogram, count, score bands kept).
- :mod:`epcg.search.prefix`: a :class:`PrefixWalk`, a scan space of combinations built
  element by element, walked depth first with each prefix's state shared by the ranks below it.
- :mod:`epcg.search.retrograde`: Algorithm 5, layer-by-layer retrograde analysis of a
  :class:`RetrogradeSpace`.
- :mod:`epcg.search.branch_bound`: Algorithm 6, branch and bound over a
  :class:`BranchBoundSpace` with an incumbent handed in.
- :mod:`epcg.search.evolve`: the steady-state evolutionary loop.

None of them imports the runtime, Dask or a game.
"""

from epcg.search.branch_bound import (
    BranchBoundSpace,
    Incumbent,
    LocalIncumbent,
    Result,
    merge,
    search,
)
from epcg.search.evolve import Evolution, evolve
from epcg.search.prefix import PrefixWalk, walk_range
from epcg.search.retrograde import RetrogradeSpace, retrograde_family, solve_layers
from epcg.search.scan import (
    ArgMax,
    ArgMin,
    CompileError,
    EvaluationError,
    Histogram,
    Kept,
    Reductions,
    ScanPartial,
    ScanSpace,
    TopK,
    scan,
    scan_family,
    scan_range,
)

__all__ = [
    "ArgMax",
    "ArgMin",
    "BranchBoundSpace",
    "CompileError",
    "EvaluationError",
    "Evolution",
    "Histogram",
    "Incumbent",
    "Kept",
    "LocalIncumbent",
    "PrefixWalk",
    "Reductions",
    "Result",
    "RetrogradeSpace",
    "ScanPartial",
    "ScanSpace",
    "TopK",
    "evolve",
    "merge",
    "retrograde_family",
    "scan",
    "scan_family",
    "scan_range",
    "search",
    "solve_layers",
    "walk_range",
]
