"""The run engine as the command line and ``epcg.run`` use it: the runtime's :class:`~epcg.runtime.engine.Engine`
with what only the layers above it can do (report.html, the epcg page on the Dask dashboard)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from epcg.runtime.engine import Engine, Hooks
from epcg.runtime.progress import Callback
from epcg.runtime.store import RunDir


def _publish(run: RunDir) -> str:
    from epcg.api.runs import Run
    from epcg.report.html import write_report

    return str(write_report(Run(run.location.where)))


def _dashboard_page(client: Any, where: str) -> str | None:
    from epcg.report.dashboard import register

    return register(client, where)


def engine(say: Callable[[str], None] = lambda line: None, callbacks: Sequence[Callback] = ()) -> Engine:
    """An engine that writes report.html at the end of a run and shows its progress on the Dask dashboard."""
    return Engine(say=say, callbacks=callbacks, hooks=Hooks(publish=_publish, dashboard_page=_dashboard_page))
