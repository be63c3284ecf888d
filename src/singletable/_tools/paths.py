"""The import path convention the command line and the demo share."""

from __future__ import annotations

import os
import sys


def put_cwd_on_path() -> None:
    """Put the current directory on ``sys.path`` (as ``python -m`` and uvicorn do), so a
    ``MODULE:NAME`` target next to the user imports."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
