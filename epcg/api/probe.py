"""What a run says about one puzzle a designer drew: ``Run.probe(puzzle)`` and ``epcg probe RUN PUZZLE``.

A kind's run class parses the puzzle (its own notation), looks it up in what
the run stored where it can, computes the rest on the spot, and hands back a
:class:`Probe`: facts as ``(name, value)`` pairs (``to_dict``), the lines the
command prints (``str``), a text picture of its solutions, and a figure for
``--out``. A puzzle that is not legal is an :class:`~epcg.runtime.errors.InvalidValue`
naming the problem (exit 2 on the command line).

>>> p = Probe("o.o", facts={"solvable": True, "solutions": 1}, lines=["uniquely solvable"], picture="o.o -> .o.")
>>> print(p)
uniquely solvable
o.o -> .o.
>>> p.to_dict()
{'puzzle': 'o.o', 'solvable': True, 'solutions': 1}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from epcg.runtime.errors import UserError


@dataclass
class Probe:
    """One puzzle as a run sees it (see the module docstring)."""

    puzzle: str
    """The puzzle as the user wrote it, normalised (Fling!: its cells; Witness: its notation; a space: its rank)."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What is known of it: ``solvable``, ``solutions``, ``rank``, the score, whether the run kept it, …"""
    lines: list[str] = field(default_factory=list)
    """The sentences ``epcg probe`` prints, in order."""
    picture: str = ""
    """Its solutions drawn as text (empty when there is none)."""
    draw: Callable[[], Figure] | None = field(default=None, repr=False)
    """Draws it (``epcg probe --out FILE.png``); None when the kind has no pictures."""

    def __str__(self) -> str:
        return "\n".join(self.lines + ([self.picture] if self.picture else []))

    def to_dict(self) -> dict[str, Any]:
        """The facts as plain data (JSON-ready), the puzzle first."""
        return {"puzzle": self.puzzle, **self.facts}

    def figure(self) -> Figure:
        """The puzzle and its solution as a figure (UserError for a kind without pictures)."""
        if self.draw is None:
            raise UserError("this kind of run draws no pictures of a probed puzzle")
        return self.draw()
