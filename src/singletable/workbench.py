"""The model as a NoSQL Workbench data model (the same JSON as ``singletable schema app:Shop
--format workbench``): ``workbench_model(Shop, items)`` gives the table, its indexes, a facet
per entity type and the sample items, to open with Workbench's "Import data model".
"""

from __future__ import annotations

from ._tools.workbench import FORMAT_VERSION, workbench_model

__all__ = ["FORMAT_VERSION", "workbench_model"]
