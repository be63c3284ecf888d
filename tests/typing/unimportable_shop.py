"""A repository whose module cannot be imported where the type checker runs (it needs an
environment variable that is never set): the mypy plugin cannot ask its patterns and keeps
the untyped keywords, never a false error (tests/typing/check_fallback.py). Never executed."""

from __future__ import annotations

import os

from tests.typing.typing_shop import Order, shop

from singletable import Repository, query

REGION = os.environ["SINGLETABLE_TYPING_NEVER_SET"]


class RemoteShop(Repository, table=shop):
    customer_orders = query(Order)
