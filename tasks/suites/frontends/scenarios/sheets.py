"""An xlsx workbook as text, the way the reference writes it: for each sheet `Sheet: NAME`,
a newline, then the sheet as `pandas.read_excel(...).to_csv(index=False)` writes it, sheets
joined by a blank line. accord reads the cells with openpyxl and writes them with `csv`, so
pandas is not needed; what pandas does is kept:

- The first row is the header; an empty header cell is `Unnamed: N` (N its column, from 0), a
  repeated name gets `.1`, `.2`. Rows and columns past the last filled cell are dropped, and so
  are rows with no value at all.
- Each column is typed as a whole: integers only (whole numbers count as integers) print as
  `3`; numbers with a fraction or a blank among them print as floats (`3.0`, blank as
  nothing); dates only print as `2024-01-05` when every one is at midnight, else
  `2024-01-05 10:30:00`; true/false only as `True`/`False`; any other mix prints each value as
  Python's `str` does.
- As pandas reads text: a cell holding one of pandas' missing-value words (`NA`, `N/A`,
  `null`, `NaN`, `#N/A`, ...) or an error (`#DIV/0!`) is blank, and a column whose every
  value is a number or text that reads as one (`007`, `1e3`) is a number column (`7`).
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, time
from pathlib import Path
from typing import Any

from .....engine.render_budget import MAX_TEXT
from .readers import MacroProblem

# pandas' default na_values (pandas._libs.parsers.STR_NA_VALUES) and Excel's error values
MISSING = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
    "#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!",
})  # fmt: skip
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _cell(value: Any) -> Any:
    """A cell's value as pandas' openpyxl reader gives it: whole numbers as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == "":
        return None
    return value


def _value(value: Any) -> Any:
    """A body cell's value: pandas' missing-value words and Excel's errors are blank (the
    header keeps them as names)."""
    return None if isinstance(value, str) and value in MISSING else value


def _as_number(value: Any) -> Any:
    """A text that reads as a number, as that number (pandas converts a column of them)."""
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        number = float(value)
        is_int = "." not in value and "e" not in value.lower()
        return int(value) if is_int else number
    return value


def _column(values: list[Any]) -> list[str]:
    """One column's values as to_csv writes them, typed as pandas types the whole column."""
    present = [v for v in values if v is not None]
    converted = [_as_number(v) for v in values]
    if all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in converted if v is not None
    ):
        values, present = converted, [v for v in converted if v is not None]
    blank = len(present) < len(values)
    if present and all(isinstance(v, bool) for v in present) and not blank:
        return [str(v) for v in values]
    numbers = [v for v in present if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) == len(present):
        if present and all(isinstance(v, int) for v in present) and not blank:
            return [str(v) for v in values]
        return ["" if v is None else repr(float(v)) for v in values]  # float64, NaN blank
    if all(isinstance(v, datetime) for v in present):
        midnight = all(v.time() == time() for v in present)
        stamp = "%Y-%m-%d" if midnight else "%Y-%m-%d %H:%M:%S"
        if any(v.microsecond for v in present):
            stamp += ".%f"
        return ["" if v is None else v.strftime(stamp) for v in values]
    return ["" if v is None else str(v) for v in values]


def _header(cells: list[Any]) -> list[str]:
    names: list[str] = []
    seen: dict[str, int] = {}
    for index, cell in enumerate(cells):
        name = f"Unnamed: {index}" if cell is None else str(cell)
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        else:
            seen[name] = 0
        names.append(name)
    return names


def sheet_csv(rows: list[list[Any]]) -> str:
    """A sheet's rows (cell values, None for empty) as to_csv(index=False) writes them."""
    rows = [[_cell(v) for v in row] for row in rows]
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    width = max((max((i + 1 for i, v in enumerate(r) if v is not None), default=0) for r in rows),
                default=0)  # fmt: skip
    if not rows or width == 0:
        return "\n"  # an empty sheet: an empty frame, one empty line
    rows = [(row + [None] * width)[:width] for row in rows]
    body = [[_value(v) for v in row] for row in rows[1:] if any(v is not None for v in row)]
    header = _header(rows[0])
    columns = [_column([row[i] for row in body]) for i in range(width)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(zip(*columns, strict=True) if body else [])
    return out.getvalue()


def workbook_csv(path: Path) -> str:
    """Every sheet of a workbook as `Sheet: NAME` and its CSV, joined by a blank line."""
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        blocks = []
        size = 0
        for sheet in book.worksheets:
            # the declared dimension may name any cell (XFD1048576: 17 billion of them);
            # without it the rows are the ones the sheet holds, each as wide as its last cell
            sheet.reset_dimensions()
            rows = []
            for row in sheet.iter_rows(values_only=True):
                size += sum(len(str(v)) + 1 for v in row if v is not None) + 1
                if size > MAX_TEXT:
                    raise MacroProblem(
                        f"'{path.name}' makes more than {MAX_TEXT:,} characters of text "
                        "(the macro expansion budget); read a smaller workbook"
                    )
                if any(_cell(v) is not None for v in row):  # pandas skips blank rows
                    rows.append(list(row))
            blocks.append(f"Sheet: {sheet.title}\n{sheet_csv(rows)}")
        return "\n\n".join(blocks)
    finally:
        book.close()
