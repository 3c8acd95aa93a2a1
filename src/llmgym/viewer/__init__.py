"""Looking at runs: the trajectory viewer (``llmgym view``), result reports (``llmgym report``)
and GIFs of recorded frames (``llmgym render``).

* :class:`~llmgym.viewer.store.TrajectoryStore` — the episodes of trajectory and results files,
  indexed for filtering and paging;
* :func:`~llmgym.viewer.server.make_server` — the local web page over a store (standard
  library only);
* :func:`~llmgym.viewer.report.write_report` — a static HTML page of plots (needs the [report]
  extra: matplotlib);
* :func:`~llmgym.viewer.render.write_gif` — an episode's recorded frames as a GIF (needs the
  [report] extra: Pillow).
"""

from __future__ import annotations

from llmgym.viewer.server import ViewerServer, make_server
from llmgym.viewer.store import EpisodeFilter, TrajectoryStore

__all__ = ["EpisodeFilter", "TrajectoryStore", "ViewerServer", "make_server"]
