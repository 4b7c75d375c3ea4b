"""What a run gives a person: results, summary, figures, the report's files, logs and this machine's scratch.

    DIR/results.json    the reduced result
    DIR/summary.md      the paper-style table
    DIR/figures/        pictures
    DIR/report.html     the report (written by epcg.report)
    DIR/live.json       the figures of a run while it runs
    DIR/logs/           the client's and workers' logs
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from epcg.runtime.store import RunDir

__all__ = ["Outputs", "FIGURES", "LIVE", "LOGS", "REPORT", "RESULTS", "SUMMARY"]

RESULTS = "results.json"
SUMMARY = "summary.md"
FIGURES = "figures"
LIVE = "live.json"
REPORT = "report.html"
LOGS = "logs"


class Outputs:
    """A run's outputs, written as text through its :class:`~epcg.runtime.store.RunDir`; figures and logs are drawn
    and written into local directories (the run's own on a filesystem, this machine's scratch on an object store)."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.location = run.location

    results_path = property(lambda self: self.location.describe(RESULTS))
    summary_path = property(lambda self: self.location.describe(SUMMARY))

    def write_results(self, results: dict[str, Any]) -> None:
        self.run.write_text(RESULTS, json.dumps(results, indent=2) + "\n")

    def write_summary(self, text: str) -> None:
        self.run.write_text(SUMMARY, text)

    @property
    def figures_dir(self) -> Path:
        """Local directory the report draws into; :meth:`publish_figures` stores it in the run."""
        return self.location.scratch(FIGURES)

    def fresh_figures(self) -> None:
        """Clear what this machine drew before, where :attr:`figures_dir` is only its copy (an object store); a
        filesystem's figures are the run's own, drawn over."""
        self.location.drop_scratch(FIGURES)

    def publish_figures(self) -> None:
        if self.figures_dir.is_dir():
            self.location.publish(FIGURES, self.figures_dir)

    def local_figures(self) -> Path:
        """The run's figures in a local directory (the run's own on a filesystem, a copy from an object store)."""
        return self.location.local_copy(FIGURES + "/")

    @contextlib.contextmanager
    def published(self, writer: Any, key: str) -> Iterator[None]:
        """Run ``writer(filename=...)`` (a context manager writing a local file) and store the file at ``key``."""
        with self.location.written_through(key) as local, writer(filename=str(local)):
            yield

    def logs_dir(self) -> Path:
        """Where this run's client and worker logs go: DIR/logs on a filesystem; on an object store a directory
        of each machine's own temp directory (log handlers append to local files)."""
        return self.location.scratch(LOGS)

    def scratch(self, name: str) -> Path:
        """A directory on this machine shared by its processes (on a filesystem, inside the run)."""
        return self.location.scratch(name)
