"""The one exception a user can cause: it ends the CLI with one line and exit status 2."""


class UserError(Exception):
    """Bad input from the user: a job file, an override, a run directory in use.

    The message is one line that names the problem and what is allowed; the CLI
    prints it as ``epcg: error: <message>`` and exits with status 2 without
    writing anything.
    """
