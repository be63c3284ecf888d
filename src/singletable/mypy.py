"""The mypy plugin: attribute-form pattern calls checked like declared signatures.

Enable it in the mypy configuration::

    [tool.mypy]
    plugins = ["singletable.mypy"]

``repo.customer_orders(customer_idd="42")`` is then an unknown keyword, a missing partition
field is a missing argument and ``customer_id=42`` for a ``str`` field a wrong type, on both
twins and on ``.first/.count/.all/.pages/.params``; ``where=`` callbacks are typed with the
entity. Results keep their precise types (``Page[Order]``, ``Customer | None``...).

How it knows a pattern's keywords: it imports the repository's module at check time and
asks the bound pattern (:func:`singletable._tools.signatures.call_signature`, the runtime's
own answer), then types each keyword with the entity field's type as mypy sees it. A module
that cannot be imported, a class defined inside a function, or a pattern it does not know
keeps the untyped ``**kwargs: Any``: never a false error. This module is loaded only by mypy;
singletable never imports it.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_POS,
    ARG_STAR2,
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    MemberExpr,
    OverloadedFuncDef,
    TypeInfo,
    Var,
)
from mypy.plugin import MethodSigContext, Plugin
from mypy.typeops import make_simplified_union
from mypy.types import (
    AnyType,
    CallableType,
    FunctionLike,
    Instance,
    NoneType,
    TupleType,
    Type,
    TypeOfAny,
    UnionType,
    get_proper_type,
)

#: the typed call surface of each twin (``singletable._patterns.bound``; a scan pattern's
#: bound classes are found the same way wherever they live in ``singletable._patterns``)
_PATTERNS = "singletable._patterns."
_METHODS = frozenset({"__call__", "params", "first", "count", "all", "pages"})
_CONDITION = ("singletable._expressions", "Condition")
_OPERATORS = ("singletable._conditions", "Operators")
DEBUG_ENV = "SINGLETABLE_MYPY_DEBUG"  # set: a failure inside the plugin is raised, not hidden


def _is_bound_method(fullname: str) -> bool:
    """``singletable._patterns.bound.BoundQuery.first`` and the like (declared-signature
    patterns are typed by their signatures already)."""
    if not fullname.startswith(_PATTERNS):
        return False
    owner, _, method = fullname.rpartition(".")
    cls = owner.rpartition(".")[2]
    return (
        method in _METHODS
        and cls.startswith(("Bound", "AsyncBound"))
        and "Declared" not in cls
        and cls not in ("Bound", "AsyncBound")
    )


class SingleTablePlugin(Plugin):
    """Types the keywords of attribute-form pattern calls; see the module docstring."""

    def get_method_signature_hook(
        self, fullname: str
    ) -> Callable[[MethodSigContext], FunctionLike] | None:
        return _typed_call if _is_bound_method(fullname) else None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point."""
    return SingleTablePlugin


# -- from a call site to the pattern object ---------------------------------------------------


def _typed_call(ctx: MethodSigContext) -> FunctionLike:
    try:
        return _typed(ctx) or ctx.default_signature
    except Exception:
        if os.environ.get(DEBUG_ENV):
            raise
        return ctx.default_signature  # never a false error: keep **kwargs: Any


def _typed(ctx: MethodSigContext) -> FunctionLike | None:
    default = ctx.default_signature
    call = ctx.context
    if not isinstance(default, CallableType) or not isinstance(call, CallExpr):
        return None
    member = call.callee
    if (
        isinstance(member, MemberExpr)
        and member.name in _METHODS
        and member.name != "__call__"
        and isinstance(member.expr, MemberExpr)
    ):
        member = member.expr  # repo.orders.first(...): the pattern is repo.orders
    if not isinstance(member, MemberExpr):
        return None  # an alias (p = repo.orders; p(...)): not traceable
    owner = get_proper_type(_type_of(ctx, member.expr))
    if not isinstance(owner, Instance):
        return None
    pattern = _runtime_attribute(ctx, owner.type, member.name)
    if pattern is None:
        return None
    from singletable._tools.signatures import call_signature

    signature = call_signature(pattern)
    if signature is None:
        return None
    return _with_keywords(ctx, default, signature, f"{member.name} of {owner.type.name}")


def _type_of(ctx: MethodSigContext, expr: Expression) -> Type:
    lookup = getattr(ctx.api, "lookup_type_or_none", None)
    known = lookup(expr) if lookup is not None else None
    return known if known is not None else ctx.api.get_expression_type(expr)


_modules: dict[str, Any] = {}


def _runtime_attribute(ctx: MethodSigContext, info: TypeInfo, name: str) -> Any:
    """The pattern object ``name`` of the runtime class behind ``info`` (None when the
    module cannot be imported or the class is local to a function)."""
    module = _import(ctx, info.module_name)
    if module is None:
        return None
    target: Any = module
    for part in info.fullname[len(info.module_name) + 1 :].split("."):
        target = target.__dict__.get(part) if hasattr(target, "__dict__") else None
        if target is None:
            return None
    for cls in getattr(target, "__mro__", ()):
        if name in cls.__dict__:
            return cls.__dict__[name]
    return None


def _import(ctx: MethodSigContext, module_name: str) -> Any:
    if module_name in _modules:
        return _modules[module_name]
    module = None
    try:
        tree = getattr(ctx.api, "modules", {}).get(module_name)
        path = getattr(tree, "path", "") or ""
        if path:
            root = os.path.dirname(os.path.abspath(path))
            for _ in range(module_name.count(".") + path.endswith("__init__.py")):
                root = os.path.dirname(root)
            if root not in sys.path:
                sys.path.append(root)
        module = importlib.import_module(module_name)
    except BaseException:  # the user's module: anything may happen while importing it
        if os.environ.get(DEBUG_ENV):
            raise
    _modules[module_name] = module
    return module


# -- the typed signature ----------------------------------------------------------------------


def _with_keywords(
    ctx: MethodSigContext, default: CallableType, signature: Any, name: str
) -> CallableType:
    """``default`` with its ``**kwargs`` replaced by the pattern's keywords."""
    kinds, names, types = [], [], []
    for kind, arg_name, arg_type in zip(default.arg_kinds, default.arg_names, default.arg_types):
        if kind != ARG_STAR2:  # e.g. first's max_pages
            kinds.append(kind)
            names.append(arg_name)
            types.append(arg_type)
    infos: dict[type[Any], TypeInfo | None] = {}
    for keyword in signature.keywords:
        kinds.append(ARG_NAMED if keyword.required else ARG_NAMED_OPT)
        names.append(keyword.name)
        types.append(_keyword_type(ctx, keyword, signature, infos))
    return default.copy_modified(
        arg_kinds=kinds, arg_names=names, arg_types=types, name=name, definition=None
    )


def _keyword_type(
    ctx: MethodSigContext, keyword: Any, signature: Any, infos: dict[type[Any], TypeInfo | None]
) -> Type:
    api = ctx.api
    none = NoneType()
    if keyword.shape == "limit":
        return UnionType([api.named_generic_type("builtins.int", []), none])
    if keyword.shape == "cursor":
        return UnionType([api.named_generic_type("builtins.str", []), none])
    if keyword.shape == "where":
        return _where_type(ctx, signature, infos)
    if keyword.shape == "prefix":
        return api.named_generic_type("builtins.str", [])
    field = _field_type(ctx, keyword.entity, keyword.field, infos)
    if keyword.shape == "pair":  # (low, high), as the stubs declare it
        return TupleType([field, field], api.named_generic_type("builtins.tuple", [field]))
    if keyword.shape == "values":
        return api.named_generic_type("typing.Iterable", [field])
    if keyword.shape == "any":
        return AnyType(TypeOfAny.special_form)
    return field


def _lookup(ctx: MethodSigContext, module: str, qualname: str) -> TypeInfo | None:
    """The class ``module.qualname`` as mypy knows it (None: not in this build, or local to
    a function)."""
    tree = getattr(ctx.api, "modules", {}).get(module)
    node: Any = tree
    for part in qualname.split("."):
        symbol = node.names.get(part) if node is not None else None
        node = symbol.node if symbol is not None else None
    return node if isinstance(node, TypeInfo) else None


def _info_of(ctx: MethodSigContext, cls: type[Any] | None, infos: dict[Any, Any]) -> Any:
    if cls is None:
        return None
    if cls not in infos:
        infos[cls] = _lookup(ctx, cls.__module__, cls.__qualname__)
    return infos[cls]


def _field_type(
    ctx: MethodSigContext, cls: type[Any] | None, field: str | None, infos: dict[Any, Any]
) -> Type:
    """The field's type as mypy sees it, ``None`` taken out (no key value is None); Any when
    the entity or field is unknown to mypy."""
    info = _info_of(ctx, cls, infos)
    anything = AnyType(TypeOfAny.special_form)
    if info is None or field is None:
        return anything
    symbol = info.get(field)
    node = symbol.node if symbol is not None else None
    found: Type | None = None
    if isinstance(node, Var):
        found = node.type
    elif isinstance(node, Decorator) and isinstance(node.func.type, CallableType):
        found = node.func.type.ret_type  # a computed field in a key
    elif isinstance(node, (FuncDef, OverloadedFuncDef)):
        found = None
    if found is None:
        return anything
    proper = get_proper_type(found)
    if isinstance(proper, UnionType):
        kept = [t for t in proper.items if not isinstance(get_proper_type(t), NoneType)]
        if kept and len(kept) < len(proper.items):
            return make_simplified_union(kept)
    return found


def _where_type(ctx: MethodSigContext, signature: Any, infos: dict[Any, Any]) -> Type:
    """``Condition | Callable[[E, Operators], Condition] | None`` (E: the entity; any of a
    collection's entities: Any)."""
    api = ctx.api
    condition_info = _lookup(ctx, *_CONDITION)
    operators_info = _lookup(ctx, *_OPERATORS)
    if condition_info is None or operators_info is None:
        return AnyType(TypeOfAny.special_form)
    condition = Instance(condition_info, [])
    operators = Instance(operators_info, [])
    entity: Type = AnyType(TypeOfAny.special_form)
    if len(signature.entities) == 1:
        info = _info_of(ctx, signature.entities[0], infos)
        if info is not None:
            entity = Instance(info, [])
    callback = CallableType(
        [entity, operators],
        [ARG_POS, ARG_POS],
        [None, None],
        condition,
        api.named_generic_type("builtins.function", []),
    )
    return UnionType([condition, callback, NoneType()])
