"""Entities with nested models, maps and lists, for the tests of document-path updates
(``set={"shipping.city": ...}``): pure tests compile their requests, backend tests send them."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, computed_field

from singletable import (
    GSI,
    DatetimeFormat,
    Entity,
    Index,
    Repository,
    Table,
    UpdatedAt,
    Version,
    get,
    query,
)

carts = Table(
    "Carts",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
    datetime_format="pynamodb",  # nested datetimes are stored in it too
)


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    city: str
    postcode: str | None = Field(default=None, alias="zip")  # stored as "zip"
    notes: list[str] = []
    since: datetime | None = None
    checked: Annotated[datetime | None, DatetimeFormat("%Y%m%d %H%M%S")] = None


class Line(BaseModel):
    sku: str
    qty: int = Field(default=1, ge=0)
    tags: set[str] = set()


class Cart(Entity, table=carts, type="CART"):
    cart_id: str
    status: Literal["open", "closed"] = "open"
    shipping: Address
    billing: Address | None = None
    lines: list[Line] = []
    attrs: dict[str, str] = {}
    counts: dict[Colour, int] = {}
    pair: tuple[int, str] = (0, "")
    meta: Any = None
    version: Annotated[int, Version()] = 0
    updated: Annotated[datetime | None, UpdatedAt()] = None

    class Keys:
        pk = "CART#{cart_id}"
        sk = "CART"
        GSI2 = Index("OPEN", "CART#{cart_id}", when={"status": "open"})


class Delivery(Entity, table=carts, type="DELIVERY"):
    """Its GSI1 partition key is computed from a nested field."""

    delivery_id: str
    address: Address
    note: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def city(self) -> str:
        return self.address.city

    class Keys:
        pk = "DELIVERY#{delivery_id}"
        sk = "DELIVERY"
        GSI1 = ("CITY#{city}", "DELIVERY#{delivery_id}")


class Invoice(Entity, table=carts, type="INVOICE"):
    """In the sparse GSI2 while its billing address has no postcode (a callable ``when=``)."""

    invoice_id: str
    billing: Address

    class Keys:
        pk = "INVOICE#{invoice_id}"
        sk = "INVOICE"
        GSI2 = Index("TO_CHECK", "INVOICE#{invoice_id}", when=lambda i: i.billing.postcode is None)


class CartRepo(Repository, table=carts):
    cart = get(Cart)
    open_carts = query(Cart, index="GSI2")
    deliveries_to = query(Delivery, index="GSI1")
    delivery = get(Delivery)
    invoice = get(Invoice)
    invoices_to_check = query(Invoice, index="GSI2")
