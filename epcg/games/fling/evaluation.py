"""Fling! evaluation stages: the best boards by expert ratio, and the distributions the layer table leaves out.

Stages (all after the deepest layer, so they never slow the layer stages down):

* ``top``: the deepest layer's uniquely solvable boards (one per orbit with
  symmetry): the ``top_puzzles`` best by expert ratio, and their ratio histogram.
* ``rNN`` (``k = 2 .. max_pieces-1``): the ratio histogram of layer ``k``'s
  uniquely solvable boards.

  Both evaluate every uniquely solvable board of a layer of at most
  ``ratio_sample`` boards. A larger layer is *sampled*: only the boards in
  blocks of ``SAMPLE_BLOCK_WORDS`` words (4,096 consecutive ranks) that
  :func:`kept_blocks` draws, each with probability ``fraction = ratio_sample /
  layer size``, independently of how tasks cut the layer. Every uniquely
  solvable board (every orbit) is in the sample with that probability, so the
  sample's histogram is the layer's scaled by about ``fraction``; it is
  reported as a sample, and the best boards as the best of the sample. With
  symmetry an orbit is in the sample when its canonical board's block is (all
  its boards count), so the sample, as uniform, is not an unreduced run's.
* ``cNN`` (``k = 2 .. max_pieces``): the solution counts of layer ``k``. A layer
  of at most ``exact_counts_up_to`` boards is counted whole: every board its
  stored layer marks solvable (one per orbit, weighted, with symmetry). A larger
  layer is *sampled*: ``count_sample`` boards drawn uniformly with replacement
  (:func:`draws`); the solvable ones among them are a uniform sample of its
  solvable boards, reported with its size, never as the layer's counts.

A ratio histogram counts boards, not orbits (each evaluated board weighs its
orbit size), bins by ``⌊10 · brute / expert⌋`` in integers
(:func:`~epcg.games.fling.domain.distribution.ratio_bin`), and is merged with
:class:`~epcg.search.scan.Histogram`, so it does not depend on chunking.

results.json keys (with ``distributions = true``; :mod:`~epcg.games.fling.kind` writes ``puzzles``,
``evaluated``, ``evaluated_fraction`` (the share of the deepest layer sampled, 1 when all of it) and
``evaluate_seconds`` from the ``top`` stage):

``ratio_histograms``
    One object per piece count 2..max_pieces: ``pieces``; ``exact`` (true: every
    uniquely solvable board; false: a sample, with its ``fraction`` and ``seed``);
    ``boards`` (uniquely solvable boards tallied: exact, the layer's ``unique``);
    ``bin_width`` (0.1); ``counts``: ``{"i": boards}`` for ratios in
    ``[i·bin_width, (i+1)·bin_width)``.
``solution_counts``
    One object per piece count 2..max_pieces: ``pieces``; ``exact`` (true: every
    solvable board; false: a sample); ``counts``: ``{"c": boards}`` with ``c``
    solutions (c ≥ 1); ``boards``: their total (exact: the layer's ``solvable``;
    sample: the solvable boards in the sample). A sample also has ``drawn`` (boards
    drawn, solvable or not) and ``seed``.
``top_tie``
    ``{"ratio", "boards", "orbits", "patterns"}``: the deepest layer's highest expert ratio (of
    those evaluated) and how many boards, orbits of boards and patterns share it.
``puzzles``, ``best_orbits``
    The best boards by (ratio desc, rank asc), one per pattern (each task keeps its best boards of
    ``top_puzzles`` patterns, :func:`distinct_best`; merged by :func:`best_patterns`), with each pattern's
    ``copies``; and the ranks of the best ``top_puzzles`` orbits (:func:`best_ranks`).
``distribution_seconds``
    Compute seconds of the ``rNN`` and ``cNN`` stages (the ``top`` stage's share
    is in ``evaluate_seconds``).

With ``keep`` (expert-ratio bands, e.g. ``[{min_ratio = 8}]``) the ``top`` and
``rNN`` stages also store every evaluated board whose ratio is in a band, one per
orbit with symmetry (:class:`~epcg.search.scan.Kept`: the ``keep_cap`` lowest ranks,
their ratios, and their orbits' sizes as payload), and results.json's ``kept`` lists
per layer and band: ``pieces``, ``band`` (``[low, high]``, null for no upper end),
``orbits`` (evaluated boards in the band), ``boards`` (every board they stand for),
``kept``, ``cut`` (the cap left some out), ``exact`` (false on a sampled layer) and
``store`` (``store.zarr/ratios/<k>/kept/<band>/``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from epcg.combinatorics.bitboard import _rank_lex_bb, _unrank_lex_bb
from epcg.combinatorics.bits import popcount_words as popcount
from epcg.games.fling.domain import distribution
from epcg.games.fling.domain.layers import layer_size
from epcg.games.fling.domain.patterns import patterns_of
from epcg.games.fling.domain.symmetry import canonical, symmetry_maps
from epcg.kinds.base import stage_records
from epcg.kinds.keep import Band, kept_of_record, kept_record, store_kept
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Stage, Task, split_range
from epcg.runtime.store import RunDir
from epcg.search.retrograde import layer_name
from epcg.search.scan import Histogram, Kept, TopK

EVALUATE = "top"
SAMPLE_CHUNK = 2_000
"""Drawn boards per task of a sampled layer."""
SAMPLE_BLOCK_WORDS = 64
"""Words (of 64 boards) per block of a sampled ratio layer: the sample keeps or drops whole blocks."""
DRAW_BLOCK = 1_000
"""Draws generated from one seed (see :func:`draws`)."""

Arrays = Callable[[int], tuple[str, str]]
"""Where layer ``k``'s (solvable, unique) bits are stored: the orbit arrays with symmetry."""


def ratio_name(k: int) -> str:
    return f"r{k:02d}"


def count_name(k: int) -> str:
    return f"c{k:02d}"


def exact(config: Any, k: int) -> bool:
    """Whether layer ``k``'s solution counts are counted whole (else sampled)."""
    return layer_size(config.width, config.height, k) <= config.exact_counts_up_to


def fraction(config: Any, k: int) -> float:
    """The share of layer ``k``'s blocks its expert-ratio stage evaluates: 1 when ``ratio_sample`` is unset or
    the layer has at most that many boards."""
    if config.ratio_sample is None:
        return 1.0
    return min(1.0, config.ratio_sample / layer_size(config.width, config.height, k))


def task_words(config: Any, k: int) -> int:
    """Words per task of layer ``k``'s expert-ratio stage: ``evaluate_chunk_words`` of them evaluated."""
    return min(config.words(k), math.ceil(config.evaluate_chunk_words / fraction(config, k)))


def _ratio_stage(config: Any, name: str, k: int, label: str, after: tuple[str, ...]) -> Stage:
    """An expert-ratio stage of layer ``k`` (see the module docstring)."""
    if fraction(config, k) < 1:
        label += f", a {fraction(config, k):.1%} sample"
    words = config.words(k)
    return Stage(name, split_range(name, words, task_words(config, k)), after=after, label=label, size=words)


def kept_blocks(config: Any, k: int, first: int, stop: int) -> np.ndarray:
    """Whether each block ``first .. stop-1`` of layer ``k`` is in its expert-ratio sample (all when exact).

    Block ``b`` is kept when a hash of (``seed``, ``k``, ``b``), uniform on
    [0, 1), is below :func:`fraction`, so the sample does not depend on tasks.

    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(seed=0, width=7, height=8, ratio_sample=1 << 30)
    >>> kept = kept_blocks(c, 11, 0, 200_000)
    >>> round(float(kept.mean()), 4), fraction(c, 11) < 0.01, bool((kept_blocks(c, 11, 500, 900) == kept[500:900]).all())
    (0.0072, True, True)
    """
    p = fraction(config, k)
    if p == 1:
        return np.ones(stop - first, dtype=bool)
    x = np.arange(first, stop, dtype=np.uint64) + np.uint64((config.seed << 8 | k) * 0x9E3779B97F4A7C15 % 2**64)
    with np.errstate(over="ignore"):  # splitmix64: arithmetic modulo 2**64
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return (x >> np.uint64(11)) < np.uint64(round(p * 2**53))


def sample_words(config: Any, k: int, words: np.ndarray, start: int) -> np.ndarray:
    """``words`` (words ``start..`` of layer ``k``) with the blocks outside the layer's sample cleared."""
    if fraction(config, k) == 1:
        return words
    first = start // SAMPLE_BLOCK_WORDS
    kept = kept_blocks(config, k, first, (start + len(words) - 1) // SAMPLE_BLOCK_WORDS + 1)
    return np.where(kept[np.arange(start, start + len(words)) // SAMPLE_BLOCK_WORDS - first], words, np.uint64(0))


def stages(config: Any) -> list[Stage]:
    """The evaluation stages of a job, each after the deepest layer."""
    top = config.max_pieces
    after = (layer_name(top),)
    out = []
    if config.top_puzzles or config.distributions or config.keep:
        out.append(_ratio_stage(config, EVALUATE, top, "expert evaluation", after))
    if not config.distributions:
        return out
    for k in range(2, top):
        out.append(_ratio_stage(config, ratio_name(k), k, f"expert ratios, {k} pieces", after))
    for k in range(2, top + 1):
        name = count_name(k)
        if exact(config, k):
            words = config.words(k)
            tasks, label, size = split_range(name, words, config.evaluate_chunk_words), "solution counts", words
        else:
            tasks, label, size = split_range(name, config.count_sample, SAMPLE_CHUNK), "sampled solution counts", \
                config.count_sample
        if size:
            out.append(Stage(name, tasks, after=after, label=f"{label}, {k} pieces", size=size))
    return out


RATIO_SECONDS = 1.3e-8
"""Compute per board of a layer (of its sample, when sampled) in its expert-ratio stage with symmetry (7×8 layer 7:
2.7 s, layer 8: 18.1 s in ``epcg run jobs/fling.toml``'s results.json); without symmetry every orbit's boards are
evaluated, about as many times more as the board has symmetries. Deeper layers cost less per board: their unique
boards thin out faster than their trees grow (about 1.5e-8 at 9 pieces, 4e-9 at 11)."""
DEEP_RATIO_DECAY = 0.52
"""Per piece beyond 9, the factor by which a board's share of its layer's expert-ratio compute falls (7×8 layers 9
to 11, memoised evaluator: about 1.5e-8, 9e-9 and 4e-9 s a board)."""


def ratio_seconds(k: int) -> float:
    """Estimated compute per board of layer ``k`` (of its sample, when sampled) in an expert-ratio stage, with
    symmetry.

    >>> ratio_seconds(8) == RATIO_SECONDS, round(ratio_seconds(11) / ratio_seconds(9), 2)
    (True, 0.27)
    """
    return RATIO_SECONDS * DEEP_RATIO_DECAY ** max(0, k - 9)


EXACT_COUNT_SECONDS = 3e-8
"""Compute per board of a layer counted whole (the same run, 7×8 layer 5: 0.1 s)."""
DRAW_SECONDS = 2e-5
"""Compute per drawn board of a sampled 8-piece layer (the same run: 1.0 s for 50,000)."""
DRAW_GROWTH = 4.0
"""How many times more a drawn board costs per piece (7×8, 8 to 11 pieces: 0.012, 0.041, 0.14, 0.58 ms a draw on
one thread, 2026-11-24)."""


def estimate(config: Any) -> dict[str, Any]:
    """Compute of the ``rNN`` and ``cNN`` stages, from the constants above (they write nothing to the store)."""
    from epcg.runtime.estimate import StageCost

    out = {}
    for stage in stages(config):
        if stage.name == EVALUATE:
            continue
        k = int(stage.name[1:])
        boards = layer_size(config.width, config.height, k)
        if stage.name.startswith("r"):  # a task's words and their sampled copy
            seconds = boards * fraction(config, k) * ratio_seconds(k) * \
                (1 if config.symmetry else symmetries(config.width, config.height))
            memory = 2 * 8 * task_words(config, k)
        elif exact(config, k):  # every board's rank, weight and count
            seconds = boards * EXACT_COUNT_SECONDS
            memory = 3 * 8 * 64 * min(config.evaluate_chunk_words, config.words(k))
        else:
            seconds = config.count_sample * DRAW_SECONDS * DRAW_GROWTH ** (k - 8)
            memory = 8 * SAMPLE_CHUNK * 4
        out[stage.name] = StageCost(peak_memory=memory, cpu_seconds=seconds)
    return out


def symmetries(width: int, height: int) -> int:
    """How many symmetries the board has: the boards an orbit holds at most.

    >>> symmetries(7, 8), symmetries(5, 5)
    (4, 8)
    """
    return len(symmetry_maps(width, height)) + 1  # the maps leave out the identity


def owns(stage: str) -> bool:
    """Whether a stage name is one of these stages."""
    return stage == EVALUATE or (stage[:1] in "rc" and stage[1:].isdigit())


def _pairs(h: Histogram) -> list[list[int]]:
    return [[score, n] for score, n in h.counts.items()]


def ratio_bands(keep: list[dict[str, Any]]) -> tuple[Band, ...]:
    """The ``(low, high)`` ratio bands of a job's ``keep`` (``high`` infinite for ``min_ratio``); a ValueError
    naming an entry that is not one.

    >>> ratio_bands([{"min_ratio": 8}, {"ratio": [2, 2.5]}])
    ((8.0, inf), (2.0, 2.5))
    """
    form = "{min_ratio = X} or {ratio = [LOW, HIGH]}"
    bands = []
    for entry in keep:
        one = isinstance(entry, dict) and len(entry) == 1
        value = entry.get("min_ratio", entry.get("ratio")) if one else None
        numbers: list[Any] = (value if isinstance(value, list) and "ratio" in entry
                              else [value] if one and "min_ratio" in entry else [])
        if not numbers or len(numbers) > 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      and math.isfinite(v) for v in numbers):
            raise ValueError(f"each band is {form} with finite numbers, got {entry!r}")
        low, high = (float(numbers[0]), math.inf) if "min_ratio" in entry else (float(numbers[0]), float(numbers[-1]))
        if low > high:
            raise ValueError(f"a band runs from low to high, got {entry!r}")
        bands.append((low, high))
    return tuple(bands)


def kept_name(k: int) -> str:
    """Where layer ``k``'s kept bands are stored (``<name>/kept/<band>``)."""
    return f"ratios/{k:02d}"


def kept_bands(results: dict[str, Any], k: int) -> list[dict[str, Any]]:
    """results.json's kept bands of layer ``k``, in the job's order (band ``i`` is stored under ``kept/i``)."""
    return [entry for entry in results.get("kept") or [] if entry["pieces"] == k]


def run_task(config: Any, task: Task, run: RunDir, arrays: Arrays) -> dict[str, Any]:
    """One task of an evaluation stage (see the module docstring)."""
    if task.stage == EVALUATE or task.stage.startswith("r"):
        k = config.max_pieces if task.stage == EVALUATE else int(task.stage[1:])
        words = sample_words(config, k, run.arrays.read_slice(arrays(k)[1], task.start, task.stop), task.start)
        ranks, brute, expert, weights = distribution.trees_of_words(
            config.width, config.height, k, words, task.start, symmetric=config.symmetry and k > 1)
        out: dict[str, Any] = {"evaluated": popcount(words)}
        if config.keep:
            ratios = brute / np.maximum(expert, 1)
            kept = []
            for band in config.bands():
                kept.append(Kept.of(band, config.keep_cap, ranks, ratios, weights.astype(np.uint8)))
                inside = (ratios >= band[0]) & (ratios <= band[1])
                out.setdefault("kept_boards", []).append(int(weights[inside].sum()))
            out["kept"] = kept_record(run, f"{task.stage}/kept/{task.index:05d}", tuple(kept))
        if task.stage == EVALUATE and config.top_puzzles:
            ratios = brute / np.maximum(expert, 1)
            # without symmetry an orbit's boards are all here: keep enough for top_puzzles distinct orbits
            keep = config.top_puzzles * (1 if config.symmetry else symmetries(config.width, config.height))
            best = TopK.of(ratios, ranks, keep)
            out["top"] = [[int(r), float(s)] for r, s in zip(best.ranks.tolist(), best.scores.tolist())]
            out["top_patterns"] = distinct_best(config, k, ranks, ratios)
            out["at_top"] = at_top(config, k, ranks, ratios, weights)
        if config.distributions:
            bins = distribution.RATIO_BINS * brute // np.maximum(expert, 1)
            out["ratios"] = _pairs(Histogram.of(bins, weights=weights))
        return out
    k = int(task.stage[1:])
    if exact(config, k):
        words = run.arrays.read_slice(arrays(k)[0], task.start, task.stop)
        ranks, weights = distribution.ranks_of_words(config.width, config.height, k, words, task.start,
                                                     symmetric=config.symmetry and k > 1)
    else:
        ranks = draws(config, k, task.start, task.stop)
        weights = np.ones(len(ranks), dtype=np.int64)
    counts = distribution.counts_of_ranks(config.width, config.height, k, ranks)
    return {"counts": _pairs(Histogram.of(counts, weights=weights))}


def draws(config: Any, k: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Draws ``[start, stop)`` (default: all) of layer ``k``'s sample, as ranks. Draw ``i`` is in block
    ``i // DRAW_BLOCK``, generated by ``numpy.random.default_rng([seed, k, block])``, so any cut of the
    draws into tasks gives the same ranks.

    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(seed=0, width=7, height=8, count_sample=5000)
    >>> np.array_equal(draws(c, 8)[1500:3500], draws(c, 8, 1500, 3500))
    True
    """
    stop = config.count_sample if stop is None else stop
    size = layer_size(config.width, config.height, k)
    first, last = start // DRAW_BLOCK, -(-stop // DRAW_BLOCK)
    blocks = [np.random.default_rng([config.seed, k, b]).integers(0, size, size=DRAW_BLOCK, dtype=np.int64)
              for b in range(first, last)]
    whole = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
    return whole[start - first * DRAW_BLOCK: stop - first * DRAW_BLOCK]


def _merged(recs: list[dict], key: str) -> Histogram:
    return Histogram.merge([Histogram(dict(map(tuple, r["result"][key]))) for r in recs])


def _json(h: Histogram, drop_zero: bool = False) -> dict[str, int]:
    return {str(score): n for score, n in h.counts.items() if not (drop_zero and score == 0)}


AT_TOP_PATTERNS = 10_000
"""The most boards tied at a task's top ratio whose patterns it lists (beyond, the tie's patterns go uncounted)."""


def at_top(config: Any, k: int, ranks: np.ndarray, ratios: np.ndarray, weights: np.ndarray) -> list:
    """``[ratio, boards, orbits, pattern keys]`` at the highest of ``ratios`` (the boards of ``ranks``, each
    weighing its orbit's boards), or ``[None, 0, 0, []]`` for none; the keys are None when more than
    ``AT_TOP_PATTERNS`` boards tie. Without symmetry every board was evaluated, and its orbits are its
    canonical boards."""
    if not len(ratios):
        return [None, 0, 0, []]
    top = float(ratios.max())
    tied = ratios == top
    if config.symmetry:
        orbits = int(tied.sum())
    else:
        maps = symmetry_maps(config.width, config.height)
        n = config.width * config.height
        orbits = sum(int(canonical(b, maps) == b) for b in (_unrank_lex_bb(int(r), n, k) for r in ranks[tied]))
    keys = None
    if tied.sum() <= AT_TOP_PATTERNS:
        n = config.width * config.height
        boards = np.array([_unrank_lex_bb(int(r), n, k) for r in ranks[tied].tolist()], dtype=np.uint64)
        keys = sorted({p.key for p in patterns_of(config.width, config.height, boards)})
    return [top, int(weights[tied].sum()), orbits, keys]


def distinct_best(config: Any, k: int, ranks: np.ndarray, ratios: np.ndarray) -> list[list]:
    """``[rank, ratio, pattern key]`` of the ``top_puzzles`` best patterns among the boards of ``ranks``, each
    its best board of lowest rank, by (ratio desc, rank asc): the best boards, ever more of them, until enough
    patterns are among them (or all are). Merging tasks' lists by the same order and keeping each pattern's
    first gives the layer's (:func:`best_patterns`)."""
    want, n = config.top_puzzles, config.width * config.height
    take = want
    while True:
        best = TopK.of(ratios, ranks, take)
        boards = np.array([_unrank_lex_bb(int(r), n, k) for r in best.ranks.tolist()], dtype=np.uint64)
        seen: set[str] = set()
        out = []
        for rank, ratio, p in zip(best.ranks.tolist(), best.scores.tolist(), patterns_of(config.width, config.height,
                                                                                         boards)):
            if p.key not in seen:
                seen.add(p.key)
                out.append([int(rank), float(ratio), p.key])
        if len(out) >= want or take >= len(ratios):
            return out[:want]
        take *= 4


def best_patterns(config: Any, recs: list[dict]) -> list[tuple[int, str]] | None:
    """The tasks' ``top_patterns`` merged: ``(rank, pattern key)`` of the ``top_puzzles`` best patterns (None for
    records made before patterns were kept)."""
    if any("top_patterns" not in r["result"] for r in recs):
        return None
    entries = sorted((-ratio, rank, key) for r in recs for rank, ratio, key in r["result"]["top_patterns"])
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for _, rank, key in entries:
        if key not in seen:
            seen.add(key)
            out.append((int(rank), key))
    return out[:config.top_puzzles]


def top_tie(recs: list[dict]) -> dict[str, Any] | None:
    """The tasks' ``at_top`` merged: ``{"ratio", "boards", "orbits", "patterns"}`` at the layer's highest ratio
    (None when no task recorded it or no board was evaluated; no ``patterns`` when a task did not list them)."""
    parts = [r["result"].get("at_top") for r in recs]
    if not parts or any(p is None for p in parts):
        return None
    scored = [p for p in parts if p[0] is not None]
    if not scored:
        return None
    top = max(p[0] for p in scored)
    tie = {"ratio": top, "boards": sum(p[1] for p in scored if p[0] == top),
           "orbits": sum(p[2] for p in scored if p[0] == top)}
    keys = [p[3] if len(p) > 3 else None for p in scored if p[0] == top]
    if all(k is not None for k in keys):
        tie["patterns"] = len(set().union(*(k for k in keys if k is not None)))
    return tie


def best_ranks(config: Any, recs: list[dict]) -> list[int]:
    """The tasks' best lists merged by (ratio desc, rank asc), one board per orbit (its canonical board)."""
    keep = config.top_puzzles * (1 if config.symmetry else symmetries(config.width, config.height))
    parts = [TopK.of([ratio for _rank, ratio in r["result"]["top"]], [rank for rank, _ratio in r["result"]["top"]],
                     keep) for r in recs]
    ranks = [int(r) for r in TopK.merge(parts, keep).ranks.tolist()]
    if config.symmetry:
        return ranks[:config.top_puzzles]
    maps, n, k = symmetry_maps(config.width, config.height), config.width * config.height, config.max_pieces
    out: list[int] = []
    for rank in ranks:
        board = _unrank_lex_bb(rank, n, k)
        first = _rank_lex_bb(canonical(board, maps), n, k)
        if first not in out:
            out.append(int(first))
    return out[:config.top_puzzles]


def store_kept_layers(config: Any, plan: Plan, records: dict[str, dict], run: RunDir) -> list[dict[str, Any]]:
    """Merge and store every evaluated layer's kept bands; results.json's ``kept`` (see the module docstring)."""
    out = []
    for k in range(2, config.max_pieces + 1):
        name = EVALUATE if k == config.max_pieces else ratio_name(k)
        if name not in plan.by_name:
            continue
        recs = stage_records(plan, name, records)
        parts = [kept_of_record(run, f"{name}/kept/{task.index:05d}", rec["result"]["kept"])
                 for task, rec in zip(plan.by_name[name].tasks, recs)]
        merged = [Kept.merge(band) for band in zip(*parts)]
        for i, entry in enumerate(store_kept(run, kept_name(k), tuple(merged))):
            orbits = entry.pop("matched")
            out.append({"pieces": k, **entry, "orbits": orbits, "exact": fraction(config, k) == 1,
                        "boards": sum(rec["result"]["kept_boards"][i] for rec in recs)})
    return out


def reduce(config: Any, plan: Plan, records: dict[str, dict]) -> dict[str, Any]:
    """``ratio_histograms``, ``solution_counts`` and ``distribution_seconds`` (see the module docstring)."""
    if not config.distributions:
        return {}
    ratios, counts, seconds = [], [], 0.0
    for k in range(2, config.max_pieces + 1):
        name = EVALUATE if k == config.max_pieces else ratio_name(k)
        recs = stage_records(plan, name, records)
        seconds += compute_seconds(recs) if name != EVALUATE else 0.0
        h = _merged(recs, "ratios")
        sampled = {} if fraction(config, k) == 1 else {"fraction": fraction(config, k), "seed": config.seed}
        ratios.append({"pieces": k, "exact": not sampled, **sampled, "boards": h.total,
                       "bin_width": 1 / distribution.RATIO_BINS, "counts": _json(h)})
        row: dict[str, Any] = {"pieces": k, "exact": exact(config, k)}
        if count_name(k) in plan.by_name:
            recs = stage_records(plan, count_name(k), records)
            seconds += compute_seconds(recs)
            h = _merged(recs, "counts")
        else:
            h = Histogram({})
        solvable = h.total - h.counts.get(0, 0)
        row.update({"boards": solvable, "counts": _json(h, drop_zero=True)})
        if not row["exact"]:
            row.update({"drawn": config.count_sample, "seed": config.seed})
        counts.append(row)
    return {"ratio_histograms": ratios, "solution_counts": counts, "distribution_seconds": round(seconds, 4)}
