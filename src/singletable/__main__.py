"""``python -m singletable``: the same command line as the ``singletable`` script."""

from __future__ import annotations

from ._tools.cli import main

raise SystemExit(main())
