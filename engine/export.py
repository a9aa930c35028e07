"""Exports: a task's output written to csv, json, sql, txt, md or a real Word document.

Each format is a writer registered in `EXPORT_FORMATS`; a new format is one decorated function.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import AccordError
from .registry import Registry
from .render import TableView, float_text, format_cell, jsonable


class ExportError(AccordError):
    """An export could not be written; the task fails."""

    exit_code = 1


ExportWriter = Callable[[Path, Any, str], None]
EXPORT_FORMATS: Registry[ExportWriter] = Registry("export format", plugins=False)


def write_export(target: Path, fmt: str, output: Any, task: str) -> Path:
    """Write `output` to `target` in `fmt`; raise `ExportError` with the reason."""
    writer = EXPORT_FORMATS.get(fmt)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        writer(target, output, task)
    except OSError as exc:
        raise ExportError(f"export to '{target}' failed: {exc.strerror or exc}") from None
    return target


@EXPORT_FORMATS.register("csv")
def _write_csv(target: Path, output: Any, task: str) -> None:
    table = _require_table(output, "csv")
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(table.columns)
        for row in table.rows:
            writer.writerow(["" if v is None else _csv_cell(v) for v in row])


def _csv_cell(value: Any) -> Any:
    return float_text(value) if isinstance(value, float) else value


@EXPORT_FORMATS.register("json")
def _write_json(target: Path, output: Any, task: str) -> None:
    text = json.dumps(jsonable(output), indent=2, ensure_ascii=False, default=str)
    target.write_text(text + "\n", encoding="utf-8")


@EXPORT_FORMATS.register("sql")
def _write_sql(target: Path, output: Any, task: str) -> None:
    target.write_text(_sql_text(output, task), encoding="utf-8")


@EXPORT_FORMATS.register("txt")
@EXPORT_FORMATS.register("md")
def _write_text(target: Path, output: Any, task: str) -> None:
    text = str(output)
    target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def _require_table(output: Any, fmt: str) -> TableView:
    if isinstance(output, TableView):
        return output
    table = getattr(output, "table", None)
    if isinstance(table, TableView):
        return table
    advice = "txt, md or docx" if isinstance(output, str) else "json"
    raise ExportError(
        f"export format '{fmt}' needs a table; this task produced {_kind(output)} "
        f"(export it as {advice})"
    )


def _kind(output: Any) -> str:
    if isinstance(output, str):
        return "text"
    if isinstance(output, list | tuple):
        return "a list"
    if isinstance(output, dict):
        return "a map"
    return type(output).__name__


def _sql_text(output: Any, task: str) -> str:
    sql = getattr(output, "sql", None)
    if isinstance(sql, str) and sql:
        return sql if sql.endswith("\n") else sql + "\n"
    if isinstance(output, str):
        return output
    raise ExportError(f"export format 'sql' needs SQL; task '{task}' produced none")


_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


@EXPORT_FORMATS.register("docx")
def _write_docx(target: Path, output: Any, task: str) -> None:
    write_docx(target, output)


_PICTURE = re.compile(r"[^\s,;()]+\.(?:png|svg|jpe?g|gif)\b", re.IGNORECASE)


def _pictures(line: str, target: Path) -> list[Path]:
    """The chart files a line names (charts are named relative to the project, which holds
    the document), as files to embed: an SVG chart by its PNG twin."""
    found = []
    for name in _PICTURE.findall(line):
        for folder in (target.parent, *target.parents):
            path = folder / name
            if path.suffix.lower() == ".svg":
                path = path.with_suffix(".png")
            if path.is_file():
                found.append(path)
                break
    return found


def write_docx(target: Path, output: Any) -> None:
    """A Word document: Markdown headings, bullets, bold and tables become Word's own, and
    the charts a line names become pictures."""
    import docx

    document = docx.Document()
    if isinstance(output, TableView):
        _docx_table(document, output.columns, [[format_cell(v) for v in r] for r in output.rows])
        document.save(str(target))
        return
    lines = str(output).splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("|") and index + 1 < len(lines) and _is_rule(lines[index + 1]):
            header = _cells(line)
            index += 2
            body = []
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                body.append(_cells(lines[index]))
                index += 1
            _docx_table(document, header, body)
            continue
        pictures = _pictures(line, target)
        if pictures:
            from docx.shared import Inches

            for picture in pictures:
                document.add_picture(str(picture), width=Inches(6))
        else:
            _docx_line(document, line)
        index += 1
    document.save(str(target))


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\s*\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*\|?\s*", line))


_CELL_BORDER = re.compile(r"(?<!\\)\|")  # a pipe not escaped as `\|` (see format_cell)


def _cells(line: str) -> list[str]:
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    return [c.strip().replace("\\|", "|") for c in _CELL_BORDER.split(text)]


def _docx_table(document: Any, header: list[str], body: list[list[str]]) -> None:
    table = document.add_table(rows=1, cols=max(len(header), 1))
    table.style = "Table Grid"
    for cell, text in zip(table.rows[0].cells, header, strict=False):
        cell.text = text
    for row in body:
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=False):
            cell.text = text


def _docx_line(document: Any, line: str) -> None:
    if not line.strip():
        return
    heading = _HEADING.match(line)
    if heading:
        document.add_heading(heading.group(2).strip(), level=min(len(heading.group(1)), 4))
        return
    bullet = _BULLET.match(line)
    numbered = _NUMBERED.match(line)
    if bullet and not line.strip().startswith("---"):
        paragraph = document.add_paragraph(style="List Bullet")
        _runs(paragraph, bullet.group(1))
    elif numbered:
        paragraph = document.add_paragraph(style="List Number")
        _runs(paragraph, numbered.group(1))
    else:
        paragraph = document.add_paragraph()
        _runs(paragraph, line.strip())


def _runs(paragraph: Any, text: str) -> None:
    position = 0
    for match in _BOLD.finditer(text):
        if match.start() > position:
            paragraph.add_run(text[position : match.start()])
        paragraph.add_run(match.group(1)).bold = True
        position = match.end()
    if position < len(text):
        paragraph.add_run(text[position:])
