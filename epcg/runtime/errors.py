"""The exceptions a run can end with: each ends the CLI with one line, never a traceback."""


class UserError(Exception):
    """Bad input from the user: a job file, an override, a run directory in use.

    The message is one line that names the problem and what is allowed; the CLI
    prints it as ``epcg: error: <message>`` and exits with status 2 without
    writing anything.
    """


class InvalidValue(UserError, ValueError):
    """A value the Python API cannot take (a filter naming nothing that exists): a ValueError to API callers,
    one line and exit status 2 in the CLI."""


class TaskFailed(Exception):
    """A task raised a deterministic error, or the disk filled: the run stops with one line naming the chunk
    (exit 1)."""


class OutputFailed(Exception):
    """Every chunk is done but results, summary, figures or report could not be written (a full disk): one line
    naming the file and how to write them again (exit 1)."""


class StaleTask(Exception):
    """A task of an earlier client session (a straggler) finished after a newer session began.

    It writes no record; the current session computes that chunk itself.
    """


class Interrupted(KeyboardInterrupt):
    """The client got SIGTERM: handled like Ctrl-C (futures cancelled, resume command printed)."""
