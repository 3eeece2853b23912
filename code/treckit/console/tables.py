"""Tables for the console (rich): a table whose cells would be cut short at the console's width is printed in a
form that keeps every cell whole."""
from __future__ import annotations

import io


def natural_width(renderable) -> int:
    """How wide ``renderable`` prints when nothing limits it (no cell wrapped or cut)."""
    from rich.console import Console
    wide = Console(file=io.StringIO(), force_terminal=False, width=100_000)
    return wide.measure(renderable).maximum


def wide_or_long(title: str, key: str, columns: list[str], rows: list[tuple[str, list[str]]], width: int,
                 column: str, value: str = "value"):
    """A table of ``rows`` (a key, then a cell per column): one line per row when it fits ``width``, else one
    line per (key, column) cell ("long" form: key, column, value), so that no number is cut short."""
    from rich.table import Table
    wide = Table(title=title)
    wide.add_column(key)
    for c in columns:
        wide.add_column(c, justify="right")
    for k, cells in rows:
        wide.add_row(k, *cells)
    if natural_width(wide) <= width:
        return wide
    long = Table(title=title)
    long.add_column(key)
    long.add_column(column)
    long.add_column(value, justify="right")
    for k, cells in rows:
        for c, cell in zip(columns, cells):
            if cell != "":
                long.add_row(k, c, cell)
    return long
