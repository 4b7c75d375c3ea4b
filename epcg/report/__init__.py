"""What a person looks at: report.html, the dashboard page, and the interface every kind fills for them.

- :mod:`.found`: ``Found``, the base of every found object (puzzle, board, map, a user's design);
- :mod:`.gallery`: the gallery groups and plots a kind's :class:`~epcg.api.Run` class hands the page;
- :mod:`.html`: ``DIR/report.html``, one self-contained page, the same for every kind;
- :mod:`.dashboard`: ``/epcg`` on the Dask dashboard;
- :mod:`.figures`, :mod:`.pictures`: saving figures, and figures as PNG, SVG or data URIs.

Nothing here knows a game: kinds are found through the registry.
"""
