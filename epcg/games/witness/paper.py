"""The Witness paper's published figures (Sturtevant, "Exploring EPCG in The Witness").

Printed beside ours in summary.md; never used to compute anything.
Keys: (width, height) for Table 1; (width, height, k) for Tables 2 and 3;
(width, height, k_cross, k_regions) for the joint rows.
"""

from __future__ import annotations

PATHS = {
    (2, 2): 12, (2, 3): 38, (3, 3): 184, (3, 4): 976,
    (4, 4): 8_512, (4, 5): 79_384, (5, 5): 1_262_816,
}
"""Table 1: paths through a grid (the paper lists height, width; the counts are symmetric)."""

MUST_CROSS = {  # (w, h, k): (puzzles, min solutions, seconds)
    (3, 3, 3): (9_880, 4, 0.01),
    (3, 3, 5): (658_008, 1, 1.51),
    (3, 4, 3): (20_825, 16, 0.20),
    (3, 4, 5): (2_349_060, 1, 5.42),
    (4, 4, 3): (43_680, 190, 0.59),
    (4, 4, 4): (677_040, 27, 6.01),
    (4, 4, 5): (8_259_888, 2, 73.41),
    (4, 4, 6): (82_598_880, 1, 969.74),
}
"""Table 2: must-cross constraints."""

REGIONS = {  # (w, h, k): (puzzles as printed, min solutions, seconds)
    (3, 3, 3): (336, 14, 0.01),
    (3, 3, 5): (2_016, 1, 0.08),
    (3, 4, 3): (880, 87, 0.24),
    (3, 4, 4): (7_920, 20, 0.59),
    (3, 4, 5): (12_672, 2, 1.38),
    (4, 4, 3): (4_480, 820, 6.25),
    (4, 4, 4): (29_120, 218, 24.56),
    (4, 4, 5): (69_888, 74, 74.36),
    (4, 4, 6): (256_256, 2, 219.36),
}
"""Table 3: region (coloured square) constraints."""

JOINT = {  # (w, h, k_cross, k_regions): (examined, puzzles at min, at min and longest, seconds, min)
    (3, 4, 2, 4): (10_098_000, 945, 485, 173.04, 1),
    (4, 4, 3, 3): (195_686_400, 3_020, 72, 5_721.52, 2),
}
"""Joint must-cross + region puzzles, from the text of the joint section."""

EXPLANATIONS: dict[tuple[str, str], str] = {
    ("regions", "4x4 k=5"): (
        "Two independent computations agree on 47: the bitset kernel and a plain reference "
        "(its own path enumeration and flood fill, tests/reference/witness.py). The two puzzles at "
        "the minimum are cells (1,2,6,7,11) and their transpose (4,8,9,13,14) with alternating "
        "colours. 74 is only the 8th-smallest count in this row (4 puzzles with one white square), "
        "and no other rule (diagonal adjacency, walls off by one, walls from path vertices) "
        "gives 74 while keeping the other rows: we read the paper's 74 as the digits of 47 swapped."
    ),
    ("joint", "4x4 k=3+3"): (
        "The paper's 3,020 and 72 are exactly the figures of a different experiment: regions only on "
        "4x4 with all 16 cells coloured (32,768 puzzles; 3,020 with a single solution, 72 of them 24 "
        "edges long; tests/games/witness/test_witness_scan.py checks this). The paper appears to have "
        "printed that output in the 3+3 sentence. Its 195,686,400 examined counts both colours of the first square "
        "(97,843,200 with the first square black, as we scan); its minimum of 2 solutions agrees with ours."
    ),
}
"""Why our figure differs from the paper's, by (kind, 'WxH k=K'): found by investigation."""
