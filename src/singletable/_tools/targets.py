"""What every ``singletable`` command shares: the one-line user error, the argument parser,
loading ``MODULE:NAME`` targets and a client for a live table."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from .paths import put_cwd_on_path


class CLIError(Exception):
    """A user mistake: reported as one line on stderr, exit status ``status``."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) and help on every command."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


# -- targets -----------------------------------------------------------------------------------


def _import_failure(module_name: str, exc: BaseException) -> CLIError:
    from ..errors import SingleTableError

    if (
        isinstance(exc, ModuleNotFoundError)
        and exc.name
        and (module_name == exc.name or module_name.startswith(exc.name + "."))
    ):
        return CLIError(
            f"cannot import module {module_name!r}: no module named {exc.name!r} "
            "(searched the current directory and sys.path)"
        )
    if isinstance(exc, SingleTableError):
        at = f" at {_relative(exc.location)}" if exc.location else ""
        return CLIError(f"importing {module_name!r} failed{at}: {type(exc).__name__}: {exc}")
    if isinstance(exc, SyntaxError):
        return CLIError(
            f"importing {module_name!r} failed: syntax error in {exc.filename}:{exc.lineno}: "
            f"{exc.msg}"
        )
    tb = exc.__traceback__
    location = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if "importlib" not in filename and not filename.startswith("<frozen"):
            location = f" ({filename}:{tb.tb_lineno})"
        tb = tb.tb_next
    return CLIError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}{location}")


def _relative(location: str) -> str:
    """``path:line`` with the path relative to the current directory when it is below it."""
    import os

    path, _, line = location.rpartition(":")
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return location
    return f"{shown}:{line}" if not shown.startswith("..") else location


def load_target(spec: str) -> Any:
    """The object named by ``MODULE:ATTRIBUTE`` (the attribute may be dotted)."""
    import importlib

    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise CLIError(f"target {spec!r} must be MODULE:NAME, e.g. myapp.models:Shop")
    put_cwd_on_path()
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise _import_failure(module_name, exc) from None
    target: Any = module
    path = module_name
    for part in attribute.split("."):
        if not hasattr(target, part):
            import difflib

            names = [n for n in dir(target) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise CLIError(f"{path!r} has no attribute {part!r}{hint}")
        target = getattr(target, part)
        path = f"{path}:{part}" if path == module_name else f"{path}.{part}"
    return target


def load_repository(spec: str, *, twins: bool = False) -> Any:
    """The repository class ``spec`` names (``twins=True``: an async one too)."""
    from .._repository import Repository
    from .._repository_base import RepositoryBase

    target = load_target(spec)
    base = RepositoryBase if twins else Repository
    if (
        isinstance(target, type)
        and issubclass(target, base)
        and getattr(target, "__singletable_table__", None) is not None  # (not the bases)
    ):
        return target
    raise CLIError(
        f"{spec} is {_describe(target)}, not a Repository subclass "
        "(class Shop(Repository, table=...))"
    )


def load_table(spec: str) -> Any:
    from .._entity import Entity
    from .._repository import Repository
    from .._table import Table

    target = load_target(spec)
    if isinstance(target, Table):
        return target
    if isinstance(target, type) and issubclass(target, Repository) and target is not Repository:
        return target.__singletable_table__
    if isinstance(target, type) and issubclass(target, Entity):
        table = getattr(target, "__singletable_table__", None)
        if isinstance(table, Table):
            return table
    raise CLIError(f"{spec} is {_describe(target)}, not a singletable Table")


def _describe(target: Any) -> str:
    if isinstance(target, type):
        return f"the class {target.__qualname__}"
    return f"a {type(target).__name__}"


def write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def live_client(endpoint: str | None, region: str | None) -> Any:
    import boto3

    session = boto3.session.Session()
    options: dict[str, Any] = {"region_name": region or session.region_name or "us-east-1"}
    if endpoint:
        options["endpoint_url"] = endpoint
        if session.get_credentials() is None:  # a local endpoint takes any credentials
            options["aws_access_key_id"] = "local"
            options["aws_secret_access_key"] = "local"
    return session.client("dynamodb", **options)
