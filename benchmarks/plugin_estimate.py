"""How close `epcg plan`'s compute figure is for a user's space: the CPU seconds its plan-time timing of the
space's own kernel predicts, against the CPU seconds the run's tasks then took (same process, same machine).

    PYTHONPATH=examples/peg-solitaire python benchmarks/plugin_estimate.py examples/peg-solitaire/jobs/triangle6.toml
    PYTHONPATH=examples/must-cross python benchmarks/plugin_estimate.py examples/must-cross/job.toml \\
        'rows=[{width=4,height=4,k=4},{width=4,height=4,k=5}]'
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import epcg
from epcg.runtime.jobs import load_job, parse_override
from epcg.runtime.registry import job_kind


def main(job_file: str, *sets: str) -> None:
    job = load_job(Path(job_file), list(sets))
    predicted = sum(cost.cpu_seconds for cost in job_kind(job.domain).estimate(job.config).values())
    out = Path(tempfile.mkdtemp()) / "run"
    epcg.run(job_file, out, progress=False, **dict(parse_override(text) for text in sets))
    records = [json.loads(p.read_text())["record"] for p in (out / "manifest").glob("*/*.json")]
    spent = sum(r["cpu_seconds"] for r in records)
    print(f"{job_file}: plan predicts {predicted:.3f} CPU s, the {len(records)} tasks took {spent:.3f} CPU s, "
          f"ratio {predicted / spent:.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
