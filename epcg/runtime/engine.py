"""The one way a run flows: prepare in one pass, claim the run directory, verify on resume, execute, finish,
release.

``epcg run``, ``resume``, ``verify`` and ``report``, ``epcg.run()``, the batch driver and ``submit --detach``
all go through :class:`Engine`, so a job gets the same refusals, notes, memory fit and outputs from each.
The engine prints nothing itself: what a person should read goes to its ``say`` function, progress to its
callbacks (Cubed's ``Plan.execute(executor, callbacks)`` is the model). What only the layers above the
runtime can do (report.html, the dashboard page) is handed in as :class:`Hooks`.

Preparing a new run (:meth:`Engine.start`)::

    job file + overrides ─► validate (the kind looked up once) ─► plan, chunk keys tuned (tuning.plan_job)
                        ─► the target: this process for a small job, else the cluster asked for
                        ─► memory fit (tuning.fit_memory) ─► limits checked (estimate.check)

and then (:meth:`Engine.run`) claim → verify (resume) → execute → finish → report → release.
Every ``OSError`` on the way is one line naming the path and the system's reason: a
:class:`UserError` before the run directory is claimed, a :class:`TaskFailed` with the resume command
after.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from epcg.runtime import daskconfig
from epcg.runtime.errors import Conflict, OutputFailed, TaskFailed, UserError, one_line
from epcg.runtime.estimate import MAX_TASKS, duration, figures, machine_memory
from epcg.runtime.execute import Executor, SerialExecutor, execute
from epcg.runtime.jobs import Job, apply_overrides, parse_override, read_toml, validate
from epcg.runtime.outdir import created, run_directory
from epcg.runtime.parts import computed_parts
from epcg.runtime.plan import Plan
from epcg.runtime.progress import Callback, counting
from epcg.runtime.checked import names_space
from epcg.runtime.history import for_results
from epcg.runtime.readout import FINISHED, length, outputs_written, state
from epcg.runtime.registry import job_kind
from epcg.runtime.runplan import Placement, RunPlan
from epcg.runtime.shell import command
from epcg.runtime.stopping import caught_signals
from epcg.runtime.outputs import LOGS, RESULTS
from epcg.runtime.records import REDUCE, REDUCED_FILE, seal
from epcg.runtime.store import DIGEST_FILE, RunDir
from epcg.runtime.tuning import fitted, plan_job, plan_of_run
from epcg.runtime.verification import checkable, open_run, unverified, verify

NEW, RESUME = "new", "resume"
"""What :meth:`Engine.resolve` decides besides :data:`~epcg.runtime.readout.FINISHED`."""
if TYPE_CHECKING:
    from epcg.runtime.batch import Submission

SMALL_JOB_SECONDS = 10.0
"""A job whose plan estimates at most this much compute in all runs in this process when no cluster is named:
starting the embedded cluster and warming its workers costs about as much."""


Session = Callable[["Engine", RunPlan, bool, "Target", "Options"], Any]
"""Runs a planned run's unfinished chunks with an engine (``runner.run(planned, new, target, options)``,
and whatever its caller prints around it)."""
Allocations = Callable[[RunDir, dict[str, dict[str, Any]]], list[dict[str, Any]] | None]
"""The allocations results.json lists, given the run and its records (None: the run was never submitted)."""


@dataclass(frozen=True)
class Target:
    """Where the tasks run: this process (``spec`` None, no client), a cluster spec, or a connected client."""

    spec: Any = None
    """A :mod:`epcg.runtime.cluster` spec: LocalSpec, SchedulerSpec or JobqueueSpec."""
    client: Any = None
    """A ``distributed.Client`` handed in (the Python API)."""
    named: bool = True
    """False when nobody named a cluster: the engine may then run a small job in this process."""
    chosen_by: str = ""
    """What chose it, when nobody named it on the command line (said before the run)."""

    @property
    def in_process(self) -> bool:
        return self.spec is None and self.client is None


@dataclass(frozen=True)
class Options:
    """How a run is to be done (the CLI's flags)."""

    max_tasks: int = MAX_TASKS
    force: bool = False
    """Run even if the plan says memory or disk is too small."""
    check: bool = False
    """First run a slice of each stage of a user's space with numba bounds checks."""
    verify_all: bool = False
    """On resume, check every finished chunk (not only those recorded since the last check)."""
    performance_report: bool = False


@dataclass(frozen=True)
class Hooks:
    """What the layers above the runtime do for a run: write report.html (returns where), and add the epcg page
    to a Dask dashboard (returns its address, or None)."""

    publish: Callable[[RunDir], str] = lambda run: ""
    dashboard_page: Callable[[Any, str], str | None] = lambda client, where: None


@dataclass
class Outcome:
    """What a finished session did."""

    run: RunDir
    results: dict[str, Any]
    report: str = ""
    notes: tuple[str, ...] = ()
    in_process: bool = False


def _quiet(_line: str) -> None:
    """The default ``say``: nothing."""


@dataclass
class Engine:
    """Runs jobs: one instance per command or API call."""

    say: Callable[[str], None] = _quiet
    callbacks: Sequence[Callback] = ()
    hooks: Hooks = field(default_factory=Hooks)
    progress: Callable[[set[str]], Callback] | None = None
    """Builds the progress callback once the chunks done before this session are known (their ids)."""
    progress_every: float | None = None
    """Seconds between the status lines of a long step that is not the run's chunks (verifying them before a
    resume); None: no such lines."""
    exits_after: bool = False
    """The process ends after the run (the command line): Dask's loggers stay with the run's log, so clusters
    closed by finalizers do not write to the terminal. A notebook gets its loggers back."""
    allocations: Allocations = for_results
    """The allocations results.json lists, given the run and its records: as the history holds them, or (a batch
    allocation finishing the run, :meth:`drive`) as they stand once this one has ended."""

    # ---- preparing ------------------------------------------------------------------------------------------

    def load(self, source: str | os.PathLike[str] | dict[str, Any], overrides: Sequence[Any] = (),
             target: Target | None = None) -> Job:
        """The job a file or its data names, with ``--set`` overrides (``"key=value"`` text or ``(key, value)``
        pairs), validated once. A serial run of a user's space compiles its kernels with bounds checks, so that
        is switched on before the space is imported."""
        daskconfig.check()
        with os_errors_are_input():
            if isinstance(source, dict):
                data, where = json.loads(json.dumps(source)), "job"
            else:
                path = Path(source)
                data, where = read_toml(path), str(path)
            pairs = [parse_override(o) if isinstance(o, str) else tuple(o) for o in overrides]
            data = apply_overrides(data, pairs)
            if target is not None and target.in_process and target.named:
                from epcg.runtime.checked import enable

                if names_space(data):
                    enable()
            return validate(data, source=where)

    def plan(self, job: Job, out: str | os.PathLike[str] | None, options: Options = Options()) -> RunPlan:
        """``job`` planned for a run in ``out`` (default ``runs/<name>``), its chunk keys tuned; not yet fitted to
        any workers (:meth:`fit`, or :func:`~epcg.runtime.tuning.fitted` for workers that need not exist, as
        ``epcg plan`` does). Nothing is written."""
        with os_errors_are_input():
            return plan_job(job, _run_dir(job, out), options.max_tasks)

    def start(self, job: Job, out: str | os.PathLike[str] | None, options: Options = Options()) -> RunPlan:
        """A new run of ``job`` in ``out`` (default ``runs/<name>``), planned and tuned: nothing written yet."""
        with os_errors_are_input():
            _check_new(_run_dir(job, out))
        return self.plan(job, out, options)

    def reopen(self, where: str | os.PathLike[str], target: Target | None = None) -> RunPlan:
        """The run at ``where``, to be continued with the job it started with. A serial resume of a user's
        space compiles its kernels with bounds checks, switched on (as :meth:`load` does) before the space is
        imported."""
        daskconfig.check()
        with os_errors_are_input():
            if target is not None and target.in_process and target.named and names_space(_stored_job(where)):
                from epcg.runtime.checked import enable

                enable()
            return prepare_resume(where)

    def resolve(self, job: Job, out: str | os.PathLike[str] | None, options: Options = Options()
                ) -> tuple[str, RunPlan]:
        """What running ``job`` in ``out`` (default ``runs/<name>``) means: ``new`` (planned, nothing written),
        ``resume`` (the run there holds this job, unfinished) or ``finished`` (it holds this job, done); a
        UserError if it holds another job."""
        path = out if out is not None else Path("runs") / job.name
        existing = RunDir(path)
        if not existing.exists():
            return NEW, self.start(job, path, options)
        if existing.read_job().digest != job.digest:
            raise UserError(f"run directory {path} holds another job ({existing.job_path}); "
                            "open it with epcg.open, or pass another out")
        planned = self.reopen(path)
        done = existing.records.done(planned.plan.tasks())
        finished = state(existing.is_locked(), len(done), planned.plan.num_tasks, outputs_written(existing),
                         False) == FINISHED
        return (FINISHED if finished else RESUME), planned

    def placement(self, planned: RunPlan, target: Target) -> Target:
        """``target``, or this process when nobody named a cluster and the job is small (:func:`small_job`)."""
        if not target.named and small_job(planned.job, planned.plan) is not None:
            return Target(named=False)
        return target

    # ---- running --------------------------------------------------------------------------------------------

    def run(self, planned: RunPlan, new: bool, target: Target, options: Options = Options()) -> Outcome:
        """Fit, check, claim, verify (resume), run the unfinished chunks, finish and report; then release.

        SIGTERM and SIGHUP stop it like Ctrl-C (an :class:`Interrupted` carrying the signal); whole chunks are
        kept and ``epcg resume`` continues.
        """
        run = planned.run
        target = self.placement(planned, target)
        with os_errors_are_input():
            if not new:
                run.arrays.group  # noqa: B018 - a missing store ends here, before the lock or any write
                refuse_in_use(run)
                run.identity()  # a damaged run.json ends here, before the cluster starts
            if target.in_process and options.performance_report:
                raise UserError("--performance-report is Dask's report, and this run has no Dask: "
                                + ("leave out one" if target.named else "name a cluster (--workers N)"))
            done = run.records.done(planned.plan.tasks()) if run.exists() else {}
        callbacks = [*self.callbacks, *([self.progress(set(done))] if self.progress else [])]
        if options.check:
            from epcg.runtime.checked import check_first_slices

            check_first_slices(planned.job.domain, json.dumps(planned.job.to_dict(), sort_keys=True))
        from epcg.runtime.logs import kept, to_run_directory

        with caught_signals(), kept(restore=not self.exits_after) as log:
            try:
                if target.in_process:
                    planned = self.fit(planned, new, *_capacity(None, None), done, options)
                    self._announce(planned, done, in_process=True, named=target.named)
                    with claimed(planned, new), to_run_directory(log, None, run.outputs.logs_dir()), \
                            run_faults(run):
                        if not new:
                            self._verify_before_resume(planned, None, options.verify_all)
                        results = run_plan(planned, None, callbacks, self.allocations)
                else:
                    planned, results = self._on_dask(planned, new, target, options, done, log, callbacks)
            except Exception:
                if log.errors and log.path:
                    self.say(f"Dask logged {log.errors} errors: {log.path}")
                raise
        with writing_outputs(run):
            report = self.hooks.publish(run)
        self.say(f"computed in {duration(results['wall_seconds'])}")
        return Outcome(run, results, report, planned.notes, target.in_process)

    def _on_dask(self, planned: RunPlan, new: bool, target: Target, options: Options, done: dict[str, Any], log: Any,
                 callbacks: Sequence[Callback]) -> tuple[RunPlan, dict[str, Any]]:
        from epcg.runtime.cluster import JobqueueSpec, LocalSpec, computing, dashboard_url, default_shape
        from epcg.runtime.dask_executor import PATIENCE, DaskExecutor
        from epcg.runtime.logs import to_run_directory

        spec, run = _logs_in_run(target.spec, planned.run), planned.run
        if isinstance(spec, LocalSpec) and not target.named:
            workers, threads = default_shape(job_kind(planned.job.domain))
            spec = spec.model_copy(update={"workers": workers, "threads_per_worker": threads})
        if isinstance(spec, LocalSpec):
            workers, memory = _capacity(spec, None)
            planned = self.fit(planned, new, workers, memory, done, options, spec.threads_per_worker,
                               computing(workers, spec.threads_per_worker))
        with _connected(spec, target.client) as client:
            if not isinstance(spec, LocalSpec):
                planned = self.fit(planned, new, *_capacity(spec, client), done, options)
            self._announce(planned, done, in_process=False, named=True)
            if target.chosen_by:
                self.say(target.chosen_by)
            dashboard = dashboard_url(client, spec)
            page = self.hooks.dashboard_page(client, run.location.where)
            self.say(f"Dask dashboard: {dashboard}")
            self.say(f"epcg progress: {page or 'not on this scheduler'}")
            executor = DaskExecutor(client, patience=None if isinstance(spec, JobqueueSpec) else PATIENCE)
            with claimed(planned, new), to_run_directory(log, client, run.outputs.logs_dir()), \
                    _live(run, client, dashboard), _performance_report(run, options.performance_report), \
                    run_faults(run):
                if not new:
                    self._verify_before_resume(planned, executor, options.verify_all)
                return planned, run_plan(planned, executor, callbacks, self.allocations)

    def fit(self, planned: RunPlan, new: bool, workers: int, memory: int | None, done: dict[str, Any],
            options: Options, threads: int = 1, parallel: int | None = None) -> RunPlan:
        """A new run's plan fitted to ``workers`` with ``memory`` each (:func:`~epcg.runtime.tuning.fitted`);
        refuse (one line) what they cannot take. ``parallel``: tasks computing at once (default: every thread of
        every worker). (``epcg submit`` fits a job to one allocation's workers before any of them exists.)"""
        with os_errors_are_input():
            free = planned.run.location.free_bytes()
        planned = fitted(planned, Placement(workers, memory, threads, parallel), free, options.max_tasks, new,
                         frozenset(done), options.force)
        if planned.refusal is not None:
            raise UserError(planned.refusal)
        return planned

    def _announce(self, planned: RunPlan, done: dict[str, Any], in_process: bool, named: bool) -> None:
        for note in planned.notes:
            self.say(f"note: {note}")
        plan = planned.plan
        self.say(f"{planned.job.name}: {plan.num_tasks - len(done)} of {plan.num_tasks} chunks to do "
                 f"in {len(plan.stages)} stages -> {planned.run.path}")
        if planned.wall_seconds is not None and not (in_process and not named):
            self.say(f"epcg plan's estimate: about {duration(planned.wall_seconds)} of work on the workers, plus "
                     "starting them and compiling their kernels")
        if in_process and not named:
            seconds = small_job(planned.job, planned.plan)
            self.say(f"a small job (about {seconds:.1f} s of compute): running it in this process, without Dask "
                     "(--workers N or a cluster runs it on Dask)")

    def _verify_before_resume(self, planned: RunPlan, executor: Executor | None, everything: bool) -> None:
        run, plan = planned.run, planned.plan
        began = time.perf_counter()
        checked, bad = self._checked(plan, run, executor, everything)
        if bad:
            self.say(f"{len(bad)} of {checked} checked chunks were damaged on disk and will be recomputed: "
                     f"{', '.join(bad)}")
            self.say(f"now {plan.num_tasks - len(run.records.done(plan.tasks()))} of {plan.num_tasks} chunks to do")
        elif checked:
            self.say(f"checked {checked:,} chunks in {duration(time.perf_counter() - began)}: all intact")

    def _checked(self, plan: Plan, run: RunDir, executor: Executor | None, everything: bool
                 ) -> tuple[int, list[str]]:
        """:func:`verify`, saying first how many chunks it reads and then how far it got, every
        :attr:`progress_every` seconds."""
        @contextlib.contextmanager
        def told(total: int) -> Iterator[Callable[[int], None]]:
            if total:
                self.say(f"checking {total:,} chunks against their records"
                         + (" (all written so far)" if everything else " (those written since the last check)"))
            with counting(self.say, "checked", total, self.progress_every) as count:
                yield count

        return verify(plan, run, executor, everything, told)

    # ---- the other commands that hold a run ----------------------------------------------------------------

    def verify(self, where: str | os.PathLike[str], target: Target, everything: bool, repair: bool = False
               ) -> list[str]:
        """Check finished chunks where the tasks run; damaged chunks lose their records. Returns their ids."""
        from epcg.runtime.logs import kept, to_run_directory
        from epcg.runtime.verification import repair as rebuild

        if repair:
            with os_errors_are_input(), RunDir(where).lock():
                for what in rebuild(where):
                    self.say(f"{RunDir(where).path}: rebuilt {what}")
            everything = True
        planned = self.reopen(where)
        run, plan = planned.run, planned.plan
        with os_errors_are_input():
            run.arrays.group  # noqa: B018 - a missing store ends here, before the cluster, the lock or any write
        if not everything and not unverified(plan, run):
            target = Target()  # nothing to read: no cluster to start
        with kept(restore=not self.exits_after) as log, claimed(planned, new=False), \
                to_run_directory(log, None, run.outputs.logs_dir()), _connected_executor(target) as executor:
            stale = [t for t, why in run.records.unsound(plan.tasks()).items() if why == "stale"]
            checked, bad = self._checked(plan, run, executor, everything)
            where_text = "in this process" if executor is None else f"on {_workers_text(executor)}"
        damaged = [t for t in bad if t not in stale]
        if stale:
            self.say(f"{run.path}: {len(stale)} chunks were made under other job parameters than job.toml's "
                     f"({', '.join(stale[:10])}{', …' if len(stale) > 10 else ''}): their records were removed; "
                     f"{command('resume', run.path)} recomputes them")
            checked -= len(stale)
        if damaged:
            self.say(f"{run.path}: {len(damaged)} of {checked} chunks checked {where_text} are damaged on disk: "
                     f"{', '.join(damaged)}")
            self.say(f"their records were removed; {command('resume', run.path)} recomputes them")
        elif not checked:
            if not stale:
                self.say(f"{run.path}: nothing to check, every finished chunk was verified since it was recorded "
                         "(--all reads them again)")
        else:
            skipped = len(checkable(run, plan)) - checked
            self.say(f"{run.path}: {checked} chunks checked {where_text}, all intact"
                     + (f" ({skipped} verified earlier, not read again; --all reads them too)" if skipped else ""))
        return bad

    def report(self, where: str | os.PathLike[str]) -> Outcome:
        """Reduce a finished run again and write its results, summary, figures and report.html."""
        planned = self.reopen(where)
        with claimed(planned, new=False):
            results = finish(planned)
        with writing_outputs(planned.run):
            report = self.hooks.publish(planned.run)
        return Outcome(planned.run, results, report)

    # ---- runs that belong to a batch system or a detached driver ----------------------------------------------

    def submit(self, planned: RunPlan, new: bool, submission: Submission, options: Options = Options()) -> None:
        """Submit a new run (``new``) or the unfinished chunks of one (a run another process holds, or that has
        an allocation waiting, is refused): fit it to one allocation's workers, claim and lay out a new
        directory, write the batch script and batch.json, record the submission, and submit it (or start the
        detached driver). A new directory whose submission fails is removed again (unless another process took
        it at once: then it is theirs)."""
        import shutil

        from epcg.runtime import batch
        from epcg.runtime.history import History, update

        run = planned.run
        if not new:
            with os_errors_are_input():
                run.arrays.group  # noqa: B018 - a missing store ends here, before anything is written
                batch.check_idle(run)
        kind, spec, info = submission.kind, submission.spec, submission.info
        if spec is not None:  # a running scheduler's workers are known only once the run starts
            done = run.records.done(planned.plan.tasks()) if not new else {}
            planned = self.fit(planned, new, *kind.workers(spec), done, options)
        if new:
            with claimed(planned, new=True):
                pass
        try:
            text = kind.script(spec, info, batch.folder(run), planned.job.name)
            with run.lock():  # a run another process took since check_idle is one line, exit status 75
                batch.write_batch(run, info, text)
                update(run, History.resubmit)
            kind.start(run, spec, info, planned.job.name, self.say)
        except BaseException as exc:
            if new and not isinstance(exc, Conflict):  # a new run another process took at once is theirs now
                shutil.rmtree(batch.folder(run), ignore_errors=True)
            raise
        self.say(f"watch it:  epcg status {run.path}")
        self.say(f"stop it:   epcg cancel {run.path}")

    def drive(self, where: str | os.PathLike[str], session: Session | None = None) -> int:
        """One allocation of a submitted run (what its batch script or detached driver runs); the exit status.
        ``session`` runs the unfinished chunks (default: :meth:`run`; the command line prints the outputs
        and the resume command with it); the allocation hands its end to :func:`finish`, so results.json and
        report.html list it."""
        from epcg.runtime.batch import read_batch
        from epcg.runtime.driver import Driver
        from epcg.runtime.schemas import Connect, DetachedBatch

        planned = prepare_resume(where)
        run = planned.run
        info = read_batch(run)
        if info is None:
            raise UserError(f"{run.path} was not submitted: use {command('resume', run.path)}")
        connect = info.connect if isinstance(info, DetachedBatch) else Connect()  # an allocation's own cluster
        options = Options(max_tasks=max(planned.plan.num_tasks, 1), force=True)
        run_session = session or (lambda runner, p, new, t, o: runner.run(p, new, t, o))

        def run_chunks(scheduler_file: Path | str | None) -> None:
            on = target(connect.cluster_file, connect.scheduler, scheduler_file, connect.workers,
                        connect.threads_per_worker)
            run_session(self, planned, False, on, options)

        driver = Driver(run, planned.plan.tasks(), info, run_chunks, say=self.say)
        self.allocations = driver.ending
        return driver.drive()


# ---- the steps, each usable alone (tests, benchmarks, notebooks) -----------------------------------------------


def small_job(job: Job, plan: Plan) -> float | None:
    """The estimated compute seconds of a job small enough to run in this process, else None.

    Small: its kind estimates every stage, the total is at most :data:`SMALL_JOB_SECONDS`, its largest stage
    fits in a quarter of this machine's memory, and it runs no user kernel (a user's space runs in worker
    processes, where a crash of its kernel is one line and not the client's death).
    """
    if names_space(job.to_dict()):
        return None
    figs = figures(job_kind(job.domain), job.config, plan, 1)
    if not figs or any(f.cpu_seconds is None or f.peak_memory is None for f in figs):
        return None
    seconds = sum(f.cpu_seconds or 0.0 for f in figs)
    if seconds > SMALL_JOB_SECONDS or max(f.peak_memory or 0 for f in figs) > machine_memory() // 4:
        return None
    return seconds


def prepare_new(job: Job, out: str | os.PathLike[str] | None, max_tasks: int = MAX_TASKS) -> RunPlan:
    """A new run of ``job`` in ``out``, planned and tuned, not yet fitted to any workers (tests, benchmarks)."""
    return Engine().start(job, out, Options(max_tasks=max_tasks))


def prepare_resume(path: str | os.PathLike[str]) -> RunPlan:
    """Check that the run in ``path`` can be resumed with the job it started with."""
    import re

    run = open_run(path)
    job = run.read_job()
    stored = run.stored_digest()
    if stored is None or not re.fullmatch(r"[0-9a-f]{64}", stored):
        raise UserError(
            f"{run.describe(DIGEST_FILE)} is {'missing' if stored is None else 'damaged'}, so job.toml cannot be "
            f"checked against the job the run started with; if job.toml is that job, 'epcg verify --repair "
            f"{run.path}' rewrites it from job.toml and checks every chunk"
        )
    if stored != run.job_file_digest():
        raise UserError(
            f"{run.job_path} has changed since the run started; resume only continues the "
            "same job (restore the file, or start a new run with 'epcg run')"
        )
    return RunPlan(run, job, plan_of_run(run, job))


def _run_dir(job: Job, out: str | os.PathLike[str] | None) -> RunDir:
    """The run directory ``out`` names (default ``runs/<job name>``), checked as a place for a run."""
    return RunDir(run_directory(out if out is not None else Path("runs") / job.name))


def _stored_job(where: str | os.PathLike[str]) -> dict[str, Any]:
    """A run's job.toml as plain data, wherever the run is stored ({} if it has none: resume says so)."""
    from epcg.runtime.jobs import loads_toml
    from epcg.runtime.store import JOB_FILE

    run = RunDir(where)
    text = run.read_text(JOB_FILE)
    return {} if text is None else loads_toml(text, run.job_path)


def _check_new(run: RunDir) -> None:
    refuse_in_use(run)
    if run.exists():
        raise UserError(
            f"run directory {run.path} already holds a run: continue it with "
            f"{command('resume', run.path)}, or pass another --out"
        )
    if not run.is_empty():
        raise UserError(f"--out {run.path} exists and is not an epcg run directory")


def refuse_in_use(run: RunDir) -> None:
    """A Conflict if another client holds the run's lock, naming it (and, on an object store, when its lease
    expires): said before any cluster starts (the lock is taken later), as the lock itself says it. A run this
    thread holds already (a batch driver's, for its whole life) is not in use by another."""
    if run.held_here():
        return
    holder = run.location.holder()
    if holder is not None:
        raise Conflict(f"run directory {run.path} is in use by another epcg client {holder}")


@contextlib.contextmanager
def claimed(planned: RunPlan, new: bool) -> Iterator[None]:
    """Hold the run directory's lock and start a new epoch; lay the directory out first if the run is new.

    The checks of :meth:`Engine.start` are repeated under the lock, so of two runs started on one new
    directory at once exactly one proceeds; a new directory that cannot be laid out is removed again.
    """
    run = planned.run
    with contextlib.ExitStack() as held:
        with os_errors_are_input(), created(run.location.local_path() if new else None):
            held.enter_context(run.lock())
            run.location.check_conditional()
            if new:
                if run.exists():
                    raise UserError(f"run directory {run.path} already holds a run (started at the same moment?): "
                                    f"{command('resume', run.path)}, or pass another --out")
                if not run.is_empty():
                    raise UserError(f"--out {run.path} exists and is not an epcg run directory")
                run.create(planned.job.to_toml(), planned.job.digest)
            elif not run.exists() or run.read_job().digest != planned.job.digest:
                raise UserError(f"run directory {run.path} changed while this client was starting")
            run.new_epoch()
            run.write_plan(planned.plan)  # readers count its chunks by it, running no code, and weigh them
        yield


def run_plan(planned: RunPlan, executor: Executor | None = None, callbacks: Sequence[Callback] = (),
             allocations: Allocations = for_results) -> dict[str, Any]:
    """Warm up, execute the unfinished tasks, reduce, write results/summary/figures.

    The caller holds the run's lock (see :func:`claimed`).
    """
    executor = executor or SerialExecutor()
    job, plan, run = planned.job, planned.plan, planned.run
    job_json = json.dumps(job.to_dict(), sort_keys=True)
    kind = job_kind(job.domain)
    kind.prepare(job.config, run)
    warm = executor.warm_up(job.domain, job_json)
    try:
        records = execute(job, plan, run, executor, callbacks)
    finally:
        kind.cleanup(job.config, run)
    starts, now = run.epoch_starts(), time.time()
    timing: dict[str, Any] = {"warm_up_seconds": round(warm, 3),
                              "wall_seconds": length(records.values(), starts, None, now)}
    parts = computed_parts(records.values(), starts, None, now)
    if len(parts) > 1:
        timing["parts"] = parts
    return finish(planned, records, timing, allocations)


TIMING_KEYS = ("warm_up_seconds", "wall_seconds", "parts")


def recorded_timing(run: RunDir) -> dict[str, Any]:
    """The timing (and parts) the run's last execution wrote into results.json (none if it has no results)."""
    from epcg.runtime.schemas import Malformed, Results

    try:
        results = run.read_json(RESULTS, Results) or {}
    except Malformed:
        return {}
    return {key: results[key] for key in TIMING_KEYS if key in results}


def finish(planned: RunPlan, records: dict[str, dict[str, Any]] | None = None, timing: dict[str, Any] | None = None,
           allocations: Allocations = for_results) -> dict[str, Any]:
    """Reduce the records into results.json and write the summary and figures: the only writer of results.json
    and summary.md (report.html is written from them).

    Without ``timing`` (``epcg report``) the timing of the execution that finished the run is kept.
    ``allocations`` gives the allocations a submitted run used (see :attr:`Engine.allocations`).
    """
    job, plan, run = planned.job, planned.plan, planned.run
    records = records if records is not None else run.records.done(plan.tasks())
    timing = timing if timing is not None else recorded_timing(run)
    missing = plan.num_tasks - len(records)
    if missing:
        raise UserError(f"run {run.path} has {missing} unfinished tasks: {command('resume', run.path)}")
    kind = job_kind(job.domain)
    with writing_outputs(run):
        run.delete(REDUCED_FILE)
        run.arrays.written = {}
        results: dict[str, Any] = {"job": job.name, "domain": job.domain}
        results.update(kind.reduce(job.config, plan, records, run))
        results.update(timing)
        used = allocations(run, records)
        if used:
            results["allocations"] = used
        if run.arrays.written:
            run.arrays.sync_written()
            run.write_text(REDUCED_FILE, seal({"task": REDUCE, "ended_at": round(time.time(), 3),
                                               "fence": run.fence, "data": run.arrays.written}))
        run.outputs.write_results(results)
        run.outputs.fresh_figures()
        summary, _figures = kind.report(job.config, results, run)
        run.outputs.write_summary(summary)
        run.outputs.publish_figures()
    return results


# ---- faults: every OSError is one line -------------------------------------------------------------------------


@contextlib.contextmanager
def os_errors_are_input() -> Iterator[None]:
    """For the block (before a run is claimed), an OSError is bad input: a UserError naming the path."""
    try:
        yield
    except OSError as exc:
        raise UserError(one_line(exc)) from None


@contextlib.contextmanager
def run_faults(run: RunDir) -> Iterator[None]:
    """For the block (a claimed run computing), an OSError is a fault of the run: a TaskFailed naming the path,
    with the command that continues (whole chunks are kept)."""
    try:
        yield
    except OSError as exc:
        raise TaskFailed(f"{one_line(exc)}; the chunks finished so far are kept: fix that, then "
                         f"{command('resume', run.path)}") from None


@contextlib.contextmanager
def writing_outputs(run: RunDir) -> Iterator[None]:
    """Turn any OSError while results, summary, figures or report are written (a full disk, a refused write)
    into an OutputFailed naming the file and how to write them again, once every chunk is done."""
    try:
        yield
    except OSError as exc:
        where = exc.filename or f"the outputs in {run.path}"
        raise OutputFailed(f"cannot write {where}: {exc.strerror or exc}; every chunk is done and kept: free space (or "
                           f"fix the permissions), then {command('report', run.path)} writes the results and the report"
                           ) from None


# ---- where the tasks run ------------------------------------------------------------------------------------------


def target(cluster_file: str | os.PathLike[str] | None = None, scheduler: str | None = None,
           scheduler_file: str | os.PathLike[str] | None = None, workers: int | None = None,
           threads_per_worker: int | None = None, serial: bool = False, client: Any = None) -> Target:
    """The target the options name: --scheduler, --scheduler-file or --cluster FILE, else
    $DASK_SCHEDULER_ADDRESS, else the embedded cluster (unnamed: a small job may run in this process); this
    process with --serial (which takes none of the others); or a client handed in."""
    daskconfig.check()
    import dask

    from epcg.runtime.cluster import LocalSpec, SchedulerSpec, load_cluster

    _typed_options({"--cluster": cluster_file, "--scheduler": scheduler, "--scheduler-file": scheduler_file,
                    "--workers": workers, "--threads-per-worker": threads_per_worker, "--serial": serial})
    given = [name for name, value in (("--scheduler", scheduler), ("--scheduler-file", scheduler_file),
                                      ("--cluster", cluster_file), ("client", client)) if value is not None]
    if serial:
        given += [name for name, value in (("--workers", workers), ("--threads-per-worker", threads_per_worker))
                  if value]
        if given:
            raise UserError(f"--serial runs in this process, without Dask: leave out {', '.join(given)}")
        return Target()
    if len(given) > 1:
        raise UserError(f"give one of {', '.join(given)}, not several")
    overrides = {k: v for k, v in (("workers", workers), ("threads_per_worker", threads_per_worker)) if v}
    if client is not None:
        if overrides:
            raise UserError("--workers and --threads-per-worker apply to the local cluster only")
        return _client_target(client)
    if scheduler:
        return Target(SchedulerSpec(kind="scheduler", address=scheduler))
    if scheduler_file:
        return Target(SchedulerSpec(kind="scheduler", scheduler_file=Path(scheduler_file).absolute()))
    from_env = dask.config.get("scheduler-address", None)
    if not cluster_file and from_env and not overrides:
        return Target(SchedulerSpec(kind="scheduler", address=from_env),
                      chosen_by=f"using the scheduler at {from_env} (Dask's scheduler-address: "
                                "$DASK_SCHEDULER_ADDRESS or a Dask configuration file)")
    with os_errors_are_input():
        spec = load_cluster(Path(cluster_file)) if cluster_file else LocalSpec()
    if overrides and not isinstance(spec, LocalSpec):
        raise UserError("--workers and --threads-per-worker apply to the local cluster only")
    return Target(spec.model_copy(update=overrides), named=bool(cluster_file or overrides))


def _typed_options(options: dict[str, Any]) -> None:
    """Refuse an option of the wrong type in the command line's words, whoever passed it (the API takes them
    as Python values, unchecked by click): counts are whole numbers >= 1, flags booleans, files paths."""
    import numbers

    from epcg.runtime.errors import InvalidValue

    for flag, value in options.items():
        if flag == "--serial":
            ok, what = isinstance(value, bool), "True or False"
        elif value is None:
            continue
        elif flag in ("--workers", "--threads-per-worker"):
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 1
            what = "a whole number >= 1"
        elif flag == "--scheduler":
            ok, what = isinstance(value, str), "an address like 'tcp://host:8786'"
        else:
            ok, what = isinstance(value, (str, os.PathLike)), "a file's path"
        if not ok:
            raise InvalidValue(f"{flag} must be {what}, got {value!r}")


def _client_target(client: Any) -> Target:
    """A ``distributed.Client`` is used as is; an address (like --scheduler) is connected to."""
    from epcg.runtime.cluster import SchedulerSpec

    if isinstance(client, (str, os.PathLike)):
        return Target(SchedulerSpec(kind="scheduler", address=str(client)))
    if not callable(getattr(client, "submit", None)):
        from epcg.runtime.errors import InvalidValue

        raise InvalidValue(f"client must be a distributed.Client or a scheduler address like 'tcp://host:8786', "
                           f"got {client!r}")
    return Target(client=client)


def _capacity(spec: Any, client: Any) -> tuple[int, int | None]:
    """Workers and memory per worker: this process's machine, the embedded cluster's, or a connected one's."""
    from epcg.runtime.cluster import LocalSpec, default_workers, local_memory, worker_memory

    if spec is None and client is None:
        return 1, machine_memory()
    if isinstance(spec, LocalSpec):
        return spec.workers or default_workers(), local_memory(spec)
    return max(1, len(client.scheduler_info(n_workers=-1)["workers"])), worker_memory(client, spec)


@contextlib.contextmanager
def _connected(spec: Any, client: Any) -> Iterator[Any]:
    """A client of ``client`` or of ``spec``'s cluster, whose workers leave stops by signal to this process."""
    from epcg.runtime.worker_signals import left_to_client

    if client is not None:
        with left_to_client(client):
            yield client
        return
    from epcg.runtime.cluster import connect

    with connect(spec) as connected, left_to_client(connected):
        yield connected


@contextlib.contextmanager
def _connected_executor(target: Target) -> Iterator[Executor | None]:
    """A Dask executor on the target (connected for the block), or None for this process."""
    if target.in_process:
        yield None
        return
    from epcg.runtime.dask_executor import DaskExecutor

    with _connected(target.spec, target.client) as client:
        yield DaskExecutor(client)


def _workers_text(executor: Any) -> str:
    count = len(executor.client.scheduler_info(n_workers=-1)["workers"])
    return f"{count} Dask worker{'s' if count != 1 else ''} ({executor.client.scheduler.address})"


def _logs_in_run(spec: Any, run: RunDir) -> Any:
    """Worker jobs of a SLURM or PBS cluster write their logs into DIR/logs/ unless the cluster file says where (a
    run on an object store has no directory the nodes share: there the batch system's default stays)."""
    from epcg.runtime.cluster import JobqueueSpec

    logs = run.location.local_path(LOGS)
    if isinstance(spec, JobqueueSpec) and spec.log_directory is None and logs is not None:
        return spec.model_copy(update={"log_directory": str(logs)})
    return spec


def _performance_report(run: RunDir, enabled: bool) -> contextlib.AbstractContextManager[Any]:
    """Dask's performance report into DIR/performance-report.html, when asked for."""
    if not enabled:
        return contextlib.nullcontext()
    from distributed import performance_report

    return run.outputs.published(performance_report, "performance-report.html")


LIVE_REFRESH = 5.0
"""Seconds between updates of DIR/live.json's worker count (adaptive clusters grow and shrink)."""


@contextlib.contextmanager
def _live(run: RunDir, client: Any, dashboard: str | None) -> Iterator[None]:
    """While a run is live, DIR/live.json tells `epcg status` where its dashboard is and how many workers it has."""
    import socket

    from epcg.runtime.dask_executor import hosts
    from epcg.runtime.outputs import LIVE

    info = {"pid": os.getpid(), "host": socket.gethostname(), "dashboard": dashboard,
            "scheduler": client.scheduler.address}

    def write() -> None:
        info["hosts"] = hosts(client)
        info["workers"] = sum(info["hosts"].values())
        run.write_text(LIVE, json.dumps(info))

    def refresh() -> None:
        while not stopped.wait(LIVE_REFRESH):
            with contextlib.suppress(Exception):  # a scheduler going away ends the run, not this thread's job
                write()

    write()
    stopped = threading.Event()
    thread = threading.Thread(target=refresh, name="epcg-live", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()
        with contextlib.suppress(Exception):  # a store gone away must not hide the error that ended the run
            run.delete(LIVE)
