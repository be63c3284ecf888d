"""The layout view, as a library: a table's items grouped by partition, per index, with the
rows each pattern returns (``build_layout``), as text (``render_text``) or as one
self-contained HTML page (``render_html``), the same as ``singletable layout`` writes.

Items come from wire-format JSON (``items_from_file``, ``parse_items``) or from seed data
loaded through a repository.
"""

from __future__ import annotations

from ._tools.layout import Layout, build_layout, parse_items, render_text
from ._tools.layout_html import render_html
from ._tools.layout_seed import items_from_file

__all__ = ["Layout", "build_layout", "items_from_file", "parse_items", "render_html", "render_text"]
