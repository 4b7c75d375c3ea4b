"""The exceptions a run can end with: each ends the CLI with one line, never a traceback. Their messages name
paths and URLs a user typed or a run directory holds: each is redacted as it is made (:class:`Redacted`).
:func:`one_line` is the one way an exception (or a tool's output) becomes the one line a message quotes."""

from epcg.runtime.text import redact


def one_line(what: BaseException | str, named: bool = False) -> str:
    """``what`` as one line of a message.

    An OSError that names its reason is ``path: reason`` (both paths of a rename), or the reason alone. Any other
    exception, or text, is its message with every run of whitespace (newlines too) as one space. ``named`` is for
    an error raised by code rather than by epcg (a task, a user's kernel, an import): its type and the first line
    of its message (the rest is a traceback's detail), or its type alone when it has no message.

    >>> one_line(FileNotFoundError(2, "No such file or directory", "/x"))
    '/x: No such file or directory'
    >>> one_line(ValueError("bad\\n  value"))
    'bad value'
    >>> one_line(TypeError("no add for\\n  int64"), named=True)
    'TypeError: no add for'
    """
    if isinstance(what, OSError) and what.strerror and not named:
        paths = [str(p) for p in (what.filename, what.filename2) if p is not None]
        return f"{' -> '.join(paths)}: {what.strerror}" if paths else what.strerror
    if not named:
        return " ".join(str(what).split())
    lines = str(what).strip().splitlines()
    first = " ".join(lines[0].split()) if lines else ""
    return f"{type(what).__name__}: {first}" if first else type(what).__name__


class Redacted(Exception):
    """An exception whose message never carries a URL's password or a secret parameter (whoever prints it)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class UserError(Redacted):
    """Bad input from the user: a job file, an override, a run directory in use.

    The message is one line that names the problem and what is allowed; the CLI
    prints it as ``epcg: error: <message>`` and exits with status 2 without
    writing anything.
    """


class InvalidValue(UserError, ValueError):
    """A value the Python API cannot take (a filter naming nothing that exists): a ValueError to API callers,
    one line and exit status 2 in the CLI."""


class NotThisKind(UserError, AttributeError):
    """A method of another job kind's runs asked of this run (``boards`` of a Witness run): one line in the CLI,
    and ``hasattr`` is False."""


class TaskFailed(Redacted):
    """A task raised a deterministic error, or the disk filled: the run stops with one line naming the chunk
    (exit 1)."""


class OutputFailed(Redacted):
    """Every chunk is done but results, summary, figures or report could not be written (a full disk): one line
    naming the file and how to write them again (exit 1)."""


class StaleTask(Redacted):
    """A task of an earlier client session (a straggler) finished after a newer session began.

    It writes no record; the current session computes that chunk itself.
    """


class Interrupted(KeyboardInterrupt):
    """The client got SIGTERM: handled like Ctrl-C (futures cancelled, resume command printed)."""


class Drain(Interrupted):
    """The batch system's early signal, the driver's own timer, or ``epcg cancel``: stop handing out
    chunks and give those in flight up to ``grace`` seconds to finish and write their records."""

    def __init__(self, signum: int, grace: float) -> None:
        super().__init__(signum, grace)
        self.signum = signum
        self.grace = grace
        self.in_flight: int | None = None
        """Chunks that were running when the signal came (set by the executor)."""
        self.unfinished: int | None = None
        """Of those, chunks still running when the grace ran out (they are recomputed later)."""
        self.waited: float = 0.0


class StorageFault(UserError):
    """Where the run lives failed in a way the user must act on, named for its cause (one line, exit status
    :attr:`exit_status`, whatever the command). The subclasses are the causes; code that must tell a missing
    object from an unusable store catches them, never a bare OSError."""

    exit_status = 2
    """The CLI's exit status for this cause."""


class Unreachable(StorageFault):
    """The store does not answer (endpoint down, network gone, timeouts): nothing is wrong with the run; try again
    when it is back."""

    exit_status = 69  # EX_UNAVAILABLE


class PermissionDenied(StorageFault):
    """The store answers but refuses this process (credentials, a read-only directory or bucket policy)."""

    exit_status = 77  # EX_NOPERM


class MissingBucket(StorageFault):
    """The bucket (or the directory holding the run) does not exist any more."""

    exit_status = 66  # EX_NOINPUT


class Damaged(StorageFault):
    """Stored bytes are not what their record vouches for (flipped, truncated, deleted, or another run's):
    ``epcg resume --verify`` finds and recomputes them."""

    exit_status = 65  # EX_DATAERR


class Conflict(StorageFault):
    """Another client holds the run, or changed it at the same moment (a lease, a compare-and-swap lost)."""

    exit_status = 75  # EX_TEMPFAIL


class Unfinished(UserError):
    """What was asked for is not computed yet (a layer or row whose chunks are not all recorded): refused in one
    line naming how far it got, never answered short."""
