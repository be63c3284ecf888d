"""Terminal output: how wide the reader's terminal is, and tables that fit it.

Tables are written for whoever reads them: an aligned text table wrapped to the terminal's
width on a terminal, Markdown in a pipe or a file (``singletable explain`` has printed Markdown
since its first release, and scripts read it). Lines go out unwrapped when there is no
terminal and no ``COLUMNS``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import textwrap
from collections.abc import Sequence
from typing import IO, Any

GAP = 2  # spaces between columns
MIN_COLUMN = 8  # a column is never wrapped narrower than this (or its header word)
MAX_WORD = 30  # longer words may be cut to fit


def is_terminal(stream: IO[str] | Any) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def output_width(stream: IO[str] | Any) -> int | None:
    """The width to wrap ``stream``'s output to: the terminal's on a terminal, else
    ``COLUMNS`` when set, else None (do not wrap)."""
    if is_terminal(stream):
        return shutil.get_terminal_size().columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None) -> str:
    """An aligned table: a header, a rule, then the rows; with ``width``, the widest columns
    are narrowed (their cells wrapped onto continuation lines) until a line fits, and the rows
    are separated by blank lines when any of them wraps."""
    natural = [len(h) for h in headers]
    for row in rows:
        natural = [max(n, len(cell)) for n, cell in zip(natural, row)]
    widths = _fit(natural, headers, rows, width)
    wrapped = any(len(cell) > w for row in rows for cell, w in zip(row, widths))

    def lines(cells: Sequence[str]) -> list[str]:
        columns = [_wrap(cell, w) for cell, w in zip(cells, widths)]
        height = max(len(c) for c in columns)
        out = []
        for i in range(height):
            parts = [(c[i] if i < len(c) else "").ljust(w) for c, w in zip(columns, widths)]
            out.append((" " * GAP).join(parts).rstrip())
        return out

    out = lines(headers)
    out.append((" " * GAP).join("-" * w for w in widths))
    for number, row in enumerate(rows):
        if wrapped and number:
            out.append("")
        out.extend(lines(row))
    return "\n".join(out) + "\n"


def _fit(
    natural: list[int],
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None,
) -> list[int]:
    """Column widths that fit ``width``: the widest columns give way first, down to their
    longest word (up to ``MAX_WORD``), so names are not cut in two unless nothing else fits."""
    widths = list(natural)
    if width is None:
        return widths
    floors = []
    for i, header in enumerate(headers):
        words = [len(w) for row in rows for w in row[i].split()] + [MIN_COLUMN]
        floor = max(max(len(w) for w in header.split()), min(max(words), MAX_WORD))
        floors.append(min(natural[i], floor))
    budget = width - GAP * (len(widths) - 1)
    headings = [min(n, max(MIN_COLUMN, len(h))) for n, h in zip(natural, headers)]
    for limits in (floors, headings):  # then, if words must be cut, cut the longest
        while sum(widths) > budget:
            shrinkable = [i for i, w in enumerate(widths) if w > limits[i]]
            if not shrinkable:
                break
            widest = max(shrinkable, key=lambda i: widths[i])
            widths[widest] -= 1
    return widths  # still too wide: the lines run over rather than into slivers


def _wrap(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def wrap_block(text: str, width: int | None, indent: str) -> list[str]:
    """``text`` as lines starting with ``indent``, wrapped to ``width`` when given."""
    if width is None or len(indent) + len(text) <= width:
        return [indent + text]
    return textwrap.wrap(
        text,
        max(width, len(indent) + MIN_COLUMN),
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
    )


class ParagraphHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse help that fits the terminal: prose paragraphs (no indented line) are refilled
    to the width; in indented blocks (examples, a list of terms and what they mean) each entry
    keeps its own line and, when too long, continues under its text column."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            lines = [indent + line for line in paragraph.splitlines()]
            if not any(line[len(indent) : len(indent) + 1].isspace() for line in lines):
                lines = [indent + " ".join(line.strip() for line in lines)]
            out: list[str] = []
            for entry, column in _entries(lines):
                out += _hanging(entry, column, width)
            paragraphs.append("\n".join(out))
        return "\n\n".join(paragraphs)


def _entries(lines: Sequence[str]) -> list[tuple[str, int]]:
    """Lines joined with their continuation lines, each with the column its text starts at
    (after a term such as ``  wire-format items  ``, else its indentation)."""
    entries: list[tuple[str, int]] = []
    for line in lines:
        lead = len(line) - len(line.lstrip())
        if entries and line.strip():
            previous, column = entries[-1]
            under_term = lead > len(previous) - len(previous.lstrip()) and lead == column
            flush = lead == 0 and not previous[:1].isspace() and not previous.endswith(":")
            if under_term or flush:
                entries[-1] = (f"{previous} {line.strip()}", column)
                continue
        term = re.match(r"(\s+\S.*?\s{2,})\S", line)
        entries.append((line.rstrip(), len(term.group(1)) if term else lead))
    return entries


def _hanging(line: str, column: int, width: int) -> list[str]:
    """``line`` wrapped to ``width``, continuing at ``column`` (its own indentation when the
    column would leave too little room)."""
    if len(line) <= width:
        return [line]
    if column > width // 2:
        column = len(line) - len(line.lstrip()) + 4
    return textwrap.wrap(line, width, subsequent_indent=" " * column, break_on_hyphens=False) or [
        line
    ]
