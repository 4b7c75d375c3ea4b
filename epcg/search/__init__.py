"""The paper's algorithms, domain-free: scan (Algorithm 1) and the others, one module each."""

from epcg.search.scan import (
    ArgMin,
    CompileError,
    EvaluationError,
    Histogram,
    Reductions,
    ScanPartial,
    ScanSpace,
    TopK,
    scan,
    scan_family,
    scan_range,
)

__all__ = [
    "ArgMin",
    "CompileError",
    "EvaluationError",
    "Histogram",
    "Reductions",
    "ScanPartial",
    "ScanSpace",
    "TopK",
    "scan",
    "scan_family",
    "scan_range",
]
