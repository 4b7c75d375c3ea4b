"""``python -m epcg`` is the ``epcg`` command."""

from epcg.cli import main

main()
