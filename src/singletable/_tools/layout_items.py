"""Items for the layout view: DynamoDB wire-format items from a JSON document, a file or a live
table (a paginated Scan, for inspection only), their display text and DynamoDB's key order.

A JSON document is *wire-format items* when it is a list of items, or an object with an
``"Items"`` list (the output of ``aws dynamodb scan``). Any other JSON object is *seed data*: the
examples' ``data.json``, which only the application's ``seed(repo)`` understands
(``layout_seed`` loads it through the repository).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

WIRE_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"})
KEY_TYPES = frozenset({"S", "N", "B"})


class ItemsError(ValueError):
    """The items file is missing, not JSON, not in DynamoDB wire format, or its seed data
    cannot be loaded."""


def _check_wire(item: Any, number: int, source: str) -> dict[str, Any]:
    problem = None
    if not isinstance(item, dict) or not item:
        problem = "is not a JSON object of attributes"
    else:
        for name, value in item.items():
            if not (
                isinstance(value, dict) and len(value) == 1 and next(iter(value)) in WIRE_TYPES
            ):
                problem = f"attribute {name!r} is not a typed value like {{'S': '...'}}"
                break
    if problem or not isinstance(item, dict):
        raise ItemsError(
            f"{source}: item {number} {problem}; items must be in DynamoDB wire format, "
            'e.g. {"PK": {"S": "CUSTOMER#42"}, "total": {"N": "12.5"}} '
            "(the output of `aws dynamodb scan` works as is)"
        )
    return item


def is_seed_data(document: Any) -> bool:
    """A JSON object without an ``"Items"`` list: seed data for ``seed(repo)``, not items."""
    return isinstance(document, dict) and not isinstance(document.get("Items"), list)


def parse_items(document: Any, source: str = "items") -> list[dict[str, Any]]:
    """Wire-format items from a decoded JSON document (a list, or ``{"Items": [...]}``)."""
    if isinstance(document, dict) and isinstance(document.get("Items"), list):
        document = document["Items"]
    if not isinstance(document, list):
        raise ItemsError(
            f"{source}: expected a JSON list of items (or an object with an 'Items' list)"
        )
    return [_check_wire(item, n, source) for n, item in enumerate(document, start=1)]


def read_document(path: str | Path) -> Any:
    """The decoded JSON of ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ItemsError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ItemsError(f"{path} is not valid JSON: {exc}") from None


def load_items(path: str | Path) -> list[dict[str, Any]]:
    """Items from a JSON file in DynamoDB wire format."""
    return parse_items(read_document(path), str(path))


def scan_items(
    client: DynamoDBClient, table_name: str, *, max_items: int = 1000
) -> list[dict[str, Any]]:
    """Every item of a live table, up to ``max_items``, by a paginated Scan (inspection only:
    access patterns never scan)."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": table_name}
    while len(items) < max_items:
        params["Limit"] = min(1000, max_items - len(items))
        response = client.scan(**params)
        items.extend(response.get("Items", []))
        last = response.get("LastEvaluatedKey")
        if not last:
            break
        params["ExclusiveStartKey"] = last
    return items[:max_items]


def format_value(value: Mapping[str, Any]) -> str:
    """A wire-format value as short display text."""
    ((tag, raw),) = value.items()
    if tag in ("S", "N"):
        return str(raw)
    if tag == "BOOL":
        return "true" if raw else "false"
    if tag == "NULL":
        return "null"
    if tag == "B":
        return f"<{len(_bytes(raw))} bytes>"
    if tag in ("SS", "NS"):
        return "{" + ", ".join(str(v) for v in raw) + "}"
    if tag == "BS":
        return f"<{len(raw)} binary values>"
    if tag == "L":
        return "[" + ", ".join(format_value(v) for v in raw) + "]"
    if tag == "M":
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in raw.items()) + "}"
    return str(raw)


def _bytes(raw: Any) -> bytes:
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw)
    try:
        return base64.b64decode(raw)
    except (ValueError, TypeError):
        return str(raw).encode()


def key_value(value: Mapping[str, Any] | None) -> tuple[int, Any] | None:
    """A key attribute's value in DynamoDB's order: numbers by value, strings by their UTF-8
    bytes, binary by bytes. ``None`` when the value cannot be a key (absent, or another type:
    such an item is not in an index keyed on that attribute)."""
    if value is None or len(value) != 1:
        return None
    ((tag, raw),) = value.items()
    if tag not in KEY_TYPES:
        return None
    if tag == "N":
        try:
            return (0, Decimal(str(raw)))
        except InvalidOperation:
            return (1, str(raw).encode("utf-8", "surrogatepass"))
    if tag == "S":
        return (1, str(raw).encode("utf-8", "surrogatepass"))
    return (2, _bytes(raw))
