"""The shop's repository, ``seed(repo)`` and ``EXAMPLE_CALLS``.

The code lives in the package, ``singletable.demo_shop.repository``
(src/singletable/demo_shop/repository.py, with its seed data ``data.json`` beside it), so
that ``singletable demo`` runs the same shop wherever singletable is installed; this module
re-exports it for the example.
"""

from __future__ import annotations

from singletable.demo_shop.repository import DATA, EXAMPLE_CALLS, Shop, build_order, seed, shop

__all__ = ["DATA", "EXAMPLE_CALLS", "Shop", "build_order", "seed", "shop"]
