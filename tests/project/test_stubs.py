"""``singletable stubs module:Repo``: the module with every attribute pattern as a declared
signature. The output runs as the module it replaces (same requests from every pattern, on
both twins) and names every type it uses (pure: no backend)."""

from __future__ import annotations

import importlib.util
import sys
import typing
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel

from singletable import Shard
from singletable._tools.stubs import Names, annotation_text, stub_module
from tests.typing import typing_shop
from tests.typing.typing_shop import AsyncShop, Shop, Status
from tests.unit.tools.test_cli import cli

JUNE = datetime(2026, 6, 1, tzinfo=timezone.utc)

#: one call of every pattern of tests/typing/typing_shop.py
CALLS: dict[str, dict[str, Any]] = {
    "customer": {"customer_id": "42"},
    "order_summary": {"customer_id": "42", "created_at": JUNE, "order_id": "A1"},
    "customer_by_email": {"email": "a@b.c"},
    "customer_orders": {"customer_id": "42", "created_at__gte": JUNE, "limit": 5},
    "order_summaries": {"customer_id": "42", "created_at__between": (JUNE, JUNE)},
    "orders_by_status": {"status": Status.PENDING, "rank__gte": 3},
    "order_refs": {"order_id": "A1"},
    "big_orders": {"customer_id": "42", "least": Decimal(50)},
    "shipped_to": {"customer_id": "42", "city": "Oslo"},
    "recent_everywhere": {"created_at__gte": JUNE},
    "customer_home": {"customer_id": "42"},
}


@pytest.fixture(scope="module")
def switched() -> Any:
    """The generated module, imported as a module of its own."""
    text = stub_module(Shop)
    path = Path(__file__).parents[1] / "typing" / "_switched_shop_generated.py"
    path.write_text(text)
    try:
        spec = importlib.util.spec_from_file_location("switched_shop", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["switched_shop"] = module
        spec.loader.exec_module(module)
    finally:
        path.unlink()
        sys.modules.pop("switched_shop", None)
    return module


def test_every_attribute_pattern_becomes_a_declared_signature(switched: Any) -> None:
    assert set(CALLS) == {n for n in vars(typing_shop.ShopPatterns) if not n.startswith("_")}
    for name in CALLS:
        assert callable(getattr(switched.ShopPatterns, name).method), name
    text = stub_module(Shop)
    assert '    @query(Order, order="desc")\n    def customer_orders(\n' in text
    assert "    def customer(self, *, customer_id: str) -> Customer | None: ..." in text
    assert "        created_at__between: tuple[datetime, datetime] | None = None,\n" in text
    assert "        where: Condition | ConditionFn[Order] | None = None,\n" in text
    assert ") -> Page[KeyRef[Order]]: ..." in text
    assert ") -> Page[OrderSummary]: ..." in text
    assert ") -> Collection: ..." in text
    assert "shard: int" not in text.split("class ShopPatterns")[1]  # the scattered field


@pytest.mark.parametrize("twin", [Shop, AsyncShop], ids=["sync", "async"])
def test_the_switched_module_sends_what_the_attribute_form_sends(switched: Any, twin: Any) -> None:
    original = twin(client=None)
    declared = getattr(switched, twin.__name__)(client=None)
    for name, kwargs in CALLS.items():
        assert getattr(declared, name).params(**kwargs) == getattr(original, name).params(**kwargs)
    assert [r.as_dict() for r in getattr(switched, twin.__name__).explain()] == [
        r.as_dict() for r in twin.explain()
    ]


def test_the_command_prints_or_writes_the_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = cli(capsys, "stubs", "tests.typing.typing_shop:Shop")
    assert (status, err) == (0, "")
    assert out == stub_module(Shop)
    target = tmp_path / "typing_shop.pyi"
    status, out, _ = cli(capsys, "stubs", "tests.typing.typing_shop:AsyncShop", "-o", str(target))
    assert (status, out) == (0, "")
    assert target.read_text() == stub_module(AsyncShop)


def test_the_command_refuses_what_is_not_a_repository(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "stubs", "tests.typing.typing_shop:shop")
    assert status == 2
    assert "tests.typing.typing_shop:shop is a Table, not a Repository subclass" in err


class Line(BaseModel):
    sku: str


@pytest.mark.parametrize(
    ("annotation", "text", "imports"),
    [
        (str, "str", []),
        (int | None, "int | None", []),
        (typing.Optional[datetime], "datetime | None", ["from datetime import datetime"]),  # noqa: UP045 (the old spelling)
        (Annotated[int, Shard(4, of="x")], "int", []),
        (Literal["a", 1], "Literal['a', 1]", ["from typing import Literal"]),
        (list[Line], "list[Line]", ["from tests.project.test_stubs import Line"]),
        (dict[str, list[Decimal]], "dict[str, list[Decimal]]", ["from decimal import Decimal"]),
        (Any, "Any", ["from typing import Any"]),
    ],
)
def test_annotations_are_named_from_the_module(
    annotation: Any, text: str, imports: list[str]
) -> None:
    names = Names({})
    assert annotation_text(annotation, names) == text
    assert names.import_lines() == imports


def test_a_name_the_module_binds_is_used_and_a_clash_is_qualified() -> None:
    names = Names({"Line": Line, "Decimal": "something else"})
    assert annotation_text(Line, names) == "Line"
    assert annotation_text(Decimal, names) == "decimal.Decimal"
    assert names.import_lines() == ["import decimal"]


def test_a_class_local_to_a_function_is_any() -> None:
    class Local(BaseModel):
        x: int

    names = Names({})
    assert annotation_text(Local, names) == "Any"
