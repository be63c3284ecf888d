"""The order-entry table, after the AWS Developer Guide's "Example of modeling relational data
in DynamoDB" (an HR and order-entry schema in one table, overloaded GSIs, write sharding).

PK / SK                          index keys
EMPLOYEE#<eid> / #EMPLOYEE       GSI1: EMPLOYEE_NAME#<name> / <eid>
                                 GSI2: WAREHOUSE#<wid> / <name>#<eid>
                                 GSI3: TITLE#<title> / <name>#<eid>
                                 RecentHires (native): hire_bucket / hired_on
EMPLOYEE#<eid> / SALES#<period>  GSI2: PERIOD#<period> / <total>#<eid>        (a rep's sales)
CUSTOMER#<cid> / #CUSTOMER       GSI1: REP#<eid> / CUSTOMER#<cid>
ORDER#<oid> / #ORDER             GSI1: CUSTOMER#<cid> / <status>#<day>#<oid>
                                 GSI2: REP#<eid> / <status>#<day>#<oid>
                                 GSI4: BUCKET#<0..14> / <status>#<day>#<oid>  (random shards)
ORDER#<oid> / LINE#<nn>          GSI3: PRODUCT#<pid> / LINE#<oid>#<nn>
PRODUCT#<pid> / #PRODUCT
PRODUCT#<pid> / STOCK#<wid>      GSI3: PRODUCT#<pid> / STOCK#<wid>
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Annotated

from singletable import GSI, Entity, Projection, Shard, Table

#: Write shards of the orders' status index: the guide's N for ~3M orders, 20% open.
ORDER_SHARDS = 15

order_entry = Table(
    "OrderEntry",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        GSI("GSI3", pk="GSI3PK", sk="GSI3SK"),
        GSI("GSI4", pk="GSI4PK", sk="GSI4SK"),
        # native: the employee's own attributes, nothing derived
        GSI("RecentHires", pk=("hire_bucket",), sk=("hired_on",)),
    ],
)


class OrderStatus(str, Enum):
    OPEN = "OPEN"
    SHIPPED = "SHIPPED"
    DELIVERED = "DELIVERED"
    CANCELLED = "CANCELLED"


class Employee(Entity, table=order_entry, type="EMPLOYEE"):
    employee_id: str
    name: str
    hired_on: date
    warehouse_id: str
    job_title: str
    department: str
    salary: Decimal
    hire_bucket: Annotated[int, Shard(4)] = 0  # drawn at random when hired

    class Keys:
        pk = "EMPLOYEE#{employee_id}"
        sk = "#EMPLOYEE"
        GSI1 = ("EMPLOYEE_NAME#{name}", "{employee_id}")
        GSI2 = ("WAREHOUSE#{warehouse_id}", "{name}#{employee_id}")
        GSI3 = ("TITLE#{job_title}", "{name}#{employee_id}")


class CurrentJob(Projection[Employee]):
    """An employee's current job details only."""

    employee_id: str
    job_title: str
    department: str
    warehouse_id: str
    salary: Decimal


class RepSales(Entity, table=order_entry, type="REP_SALES"):
    """An account rep's order total in one sales period (a materialised aggregate)."""

    rep_id: str
    period: str  # "2026-Q2"
    total: Decimal

    class Keys:
        pk = "EMPLOYEE#{rep_id}"
        sk = "SALES#{period}"
        GSI2 = ("PERIOD#{period}", "{total:sortable}#{rep_id}")


class Customer(Entity, table=order_entry, type="CUSTOMER"):
    customer_id: str
    company: str
    city: str
    rep_id: str  # the customer's account rep

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "#CUSTOMER"
        GSI1 = ("REP#{rep_id}", "CUSTOMER#{customer_id}")


class Order(Entity, table=order_entry, type="ORDER"):
    order_id: str
    customer_id: str
    rep_id: str  # the rep who took the order
    ordered_on: date
    status: OrderStatus
    total: Decimal
    bucket: Annotated[int, Shard(ORDER_SHARDS)] = 0  # the guide's GSI-Bucket: random 0..14

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "#ORDER"
        # the status first, then the day: one status is a prefix, every status a fan-out
        GSI1 = ("CUSTOMER#{customer_id}", "{status}#{ordered_on}#{order_id}")
        GSI2 = ("REP#{rep_id}", "{status}#{ordered_on}#{order_id}")
        GSI4 = ("BUCKET#{bucket}", "{status}#{ordered_on}#{order_id}")


class OrderLine(Entity, table=order_entry, type="ORDER_LINE"):
    order_id: str
    line_no: int
    product_id: str
    warehouse_id: str  # where the line ships from
    quantity: int
    price: Decimal

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "LINE#{line_no:02d}"
        GSI3 = ("PRODUCT#{product_id}", "LINE#{order_id}#{line_no:02d}")


class Product(Entity, table=order_entry, type="PRODUCT"):
    product_id: str
    name: str
    total_stock: int = 0  # kept with every stock change, in the same transaction

    class Keys:
        pk = "PRODUCT#{product_id}"
        sk = "#PRODUCT"


class ProductStock(Projection[Product]):
    """A product's total stock over every warehouse."""

    product_id: str
    total_stock: int


class Inventory(Entity, table=order_entry, type="INVENTORY"):
    """A product's stock in one warehouse."""

    product_id: str
    warehouse_id: str
    quantity: int

    class Keys:
        pk = "PRODUCT#{product_id}"
        sk = "STOCK#{warehouse_id}"
        GSI3 = ("PRODUCT#{product_id}", "STOCK#{warehouse_id}")
