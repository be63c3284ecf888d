"""The shop's table and entities.

The code lives in the package, ``singletable.demo_shop.models``
(src/singletable/demo_shop/models.py), so that ``singletable demo`` runs the same shop
wherever singletable is installed; this module re-exports it for the example.
"""

from __future__ import annotations

from singletable.demo_shop.models import (
    Customer,
    Order,
    OrderDetails,
    OrderItem,
    OrderStatus,
    OrderSummary,
    Payment,
    Product,
    shop,
)

__all__ = [
    "Customer",
    "Order",
    "OrderDetails",
    "OrderItem",
    "OrderStatus",
    "OrderSummary",
    "Payment",
    "Product",
    "shop",
]
