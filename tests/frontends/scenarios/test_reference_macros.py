"""Macros that expand as the reference's (VinodKumarKP/ptr_oai_adk, agent-evaluator at 96f00482:
its macros/*.py and tests/test_macros.py). Each expected value names the reference function
it comes from."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from accord.tasks.suites.frontends.scenarios.macros import MacroContext, expand

NOW = datetime(2024, 3, 15, 10, 30, 0, 123456)  # a Friday, with microseconds


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project.resolve()


@pytest.fixture
def ctx(root: Path) -> MacroContext:
    return MacroContext(project_root=root, seed=7, now=lambda: NOW)


def test_open_text_reads_crlf_as_text_mode_does(ctx: MacroContext, root: Path) -> None:
    # file_macros.macro_open: open(file_path, 'r', encoding='utf-8').read()
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\rthree\n")
    assert expand("{{ OPEN crlf.txt }}", ctx) == "one\ntwo\nthree\n"
    assert expand("{{ SAMPLE crlf.txt 1 }}", ctx) == "one\n"


def test_open_docx_keeps_the_body_order(ctx: MacroContext, root: Path) -> None:
    # file_macros._read_docx: paragraphs and tables in body order, "\n\n" between, a row as
    # "| " + " | ".join(cell.text.strip().replace('\n', ' ')) + " |", rows joined by "\n"
    import docx

    document = docx.Document()
    document.add_paragraph("Title")
    table = document.add_table(rows=2, cols=2)
    for (row, column), text in {(0, 0): "a", (0, 1): " b\nc ", (1, 0): "1", (1, 1): ""}.items():
        table.cell(row, column).text = text
    document.add_paragraph("")
    document.add_paragraph("After")
    document.save(str(root / "d.docx"))
    assert expand("{{ OPEN d.docx }}", ctx) == "Title\n\n| a | b c |\n| 1 |  |\n\n\n\nAfter"


def test_open_xlsx_as_pandas_writes_it(ctx: MacroContext, root: Path) -> None:
    # file_macros._read_excel: f"Sheet: {name}\n{pd.read_excel(...).to_csv(index=False)}",
    # sheets joined by "\n\n". pandas types each column: ints only print as ints, a blank or a
    # fraction makes the column float (1.0, blank empty), dates at midnight print as dates.
    import openpyxl

    book = openpyxl.Workbook()
    sales = book.active
    assert sales is not None
    sales.title = "Sales"
    sales.append(["region", "units", "price", "returns", "day", "when", "ok", None, "note"])
    sales.append(["North", 3, 2.5, 1, datetime(2024, 1, 5), datetime(2024, 1, 5, 9, 30), True,
                  "x", "a, b"])  # fmt: skip
    sales.append(["South", 4, 3.0, None, datetime(2024, 1, 6), datetime(2024, 1, 6), False,
                  None, 'say "hi"'])  # fmt: skip
    sales.append([None] * 9)  # a blank row: pandas skips it
    sales.append(["East", 5, 1, 2, None, None, True, 7, None])
    book.create_sheet("Empty header").append(["only"])
    book.save(root / "sales.xlsx")
    assert expand("{{ OPEN sales.xlsx }}", ctx) == (
        "Sheet: Sales\n"
        "region,units,price,returns,day,when,ok,Unnamed: 7,note\n"
        'North,3,2.5,1.0,2024-01-05,2024-01-05 09:30:00,True,x,"a, b"\n'
        'South,4,3.0,,2024-01-06,2024-01-06 00:00:00,False,,"say ""hi"""\n'
        "East,5,1.0,2.0,,,True,7,\n"
        "\n\n"
        "Sheet: Empty header\nonly\n"
    )


def test_open_xlsx_reads_text_as_pandas_does(ctx: MacroContext, root: Path) -> None:
    # pandas.read_excel (file_macros._read_excel): its default na_values are blank in the body
    # (a header keeps them), and a column of numbers and numeric text is a number column
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Text"
    sheet.append(["NA", "code", "mixed", "ratio"])
    sheet.append(["x", "007", "007", "1.5"])
    sheet.append(["null", "12", "abc", 2])
    sheet.append(["N/A", 3, None, "n/a"])
    book.save(root / "text.xlsx")
    assert expand("{{ OPEN text.xlsx }}", ctx) == (
        "Sheet: Text\nNA,code,mixed,ratio\nx,7,007,1.5\n,12,abc,2.0\n,3,,\n"
    )


def test_concat_puts_a_rule_between_blank_lines(ctx: MacroContext, root: Path) -> None:
    # file_macros.macro_concat: "\n\n---\n\n".join(contents)
    (root / "a.txt").write_text("A\n")
    (root / "b.txt").write_text("B")
    assert expand("{{ CONCAT a.txt b.txt }}", ctx) == "A\n\n\n---\n\nB"


def test_sample_keeps_line_ends_and_samples_only_for_random(ctx: MacroContext, root: Path) -> None:
    # file_macros.macro_sample: "".join(lines[:n]); random only when args[2].lower() == 'random'
    (root / "log.txt").write_text("".join(f"Log entry {i}\n" for i in range(10)))
    assert expand("{{ SAMPLE log.txt 5 }}", ctx) == "".join(f"Log entry {i}\n" for i in range(5))
    assert expand("{{ SAMPLE log.txt 3 first }}", ctx) == "Log entry 0\nLog entry 1\nLog entry 2\n"
    sampled = expand("{{ SAMPLE log.txt 10 RANDOM }}", ctx).splitlines()
    assert sorted(sampled) == [f"Log entry {i}" for i in range(10)]
    (root / "empty.txt").write_text("")
    assert expand("{{ SAMPLE empty.txt 3 }}", ctx) == ""


def test_list_files_lists_folders_too(ctx: MacroContext, root: Path) -> None:
    # file_macros.macro_list_files: json.dumps(sorted(os.listdir(dir)), fnmatch'ed)
    (root / "data" / "sub").mkdir(parents=True)
    (root / "data" / "a.txt").write_text("")
    (root / "data" / "b.json").write_text("")
    assert expand("{{ LIST_FILES data }}", ctx) == '["a.txt", "b.json", "sub"]'
    assert expand("{{ LIST_FILES data s* }}", ctx) == '["sub"]'


@pytest.mark.parametrize(
    ("document", "path", "expected"),
    [
        ('{"solo": ["only"]}', "$.solo[*]", '["only"]'),  # a wildcard: the list, as JSON
        ('{"flag": true}', "$.flag", "True"),  # str(True)
        ('{"a": 1}', "$.nope", "None"),  # str(None): nothing found
        ('{"a": null}', "$.a", "None"),
        ('{"n": 42, "f": 1.0}', "$.f", "1.0"),
        ('{"users": [{"name": "Alice"}]}', "$.users[0].name", "Alice"),
        ('{"users": [{"name": "Alice"}]}', "$.users[3]", "None"),
        ('{"o": {"k": "café"}}', "$.o", '{"k": "caf\\u00e9"}'),  # json.dumps, ASCII
    ],
)
def test_json_extract_writes_values_as_the_reference(
    document: str, path: str, expected: str, ctx: MacroContext, root: Path
) -> None:
    # file_macros.macro_json_extract: json.dumps(dict or list), else str(result)
    (root / "d.json").write_text(document, encoding="utf-8")
    assert expand(f"{{{{ JSON_EXTRACT d.json {path} }}}}", ctx) == expected


def test_template_leaves_unknown_fields_and_braces(ctx: MacroContext, root: Path) -> None:
    # file_macros.macro_template: template.replace(f"{{{key}}}", str(value)) for each key
    (root / "t.txt").write_text('Hi {name}, on {date}: {"json": 1} {{name}} {}')
    out = expand("""{{ TEMPLATE t.txt '{"name": "Ada", "n": true}' }}""", ctx)
    assert out == 'Hi Ada, on {date}: {"json": 1} {Ada} {}'


def test_sql_query_is_json_with_indent_2(ctx: MacroContext, root: Path) -> None:
    # util_macros.macro_sql_query: json.dumps([dict(row) ...], indent=2)
    with sqlite3.connect(root / "t.db") as connection:
        connection.execute("CREATE TABLE u (id INTEGER, name TEXT)")
        connection.execute("INSERT INTO u VALUES (1, 'Zoë')")
    connection.close()
    out = expand('{{ SQL_QUERY t.db "SELECT id, name FROM u" }}', ctx)
    assert out == '[\n  {\n    "id": 1,\n    "name": "Zo\\u00eb"\n  }\n]'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{ BASE64 }}", ""),  # data_macros.macro_base64: no args -> ""
        ("{{ JSON_ESCAPE }}", ""),  # data_macros.macro_json_escape
        ("{{ URL_ENCODE }}", ""),  # util_macros.macro_url_encode
        ("{{ JSON_ESCAPE café }}", "caf\\u00e9"),  # json.dumps(text)[1:-1]
        ('{{ URL_ENCODE "path/to file" }}', "path/to%20file"),  # urllib.parse.quote(text)
        ("{{ URL_ENCODE hello world&more }}", "hello%20world%26more"),  # test_macro_url_encode
        ("{{ IF none Yes No }}", "Yes"),  # logic_macros.macro_if: only false/no/0/off/'' false
        ("{{ IF null Yes No }}", "Yes"),
        ("{{ IF OFF Yes No }}", "No"),
        ("{{ CALC 10.5 * 2 }}", "21.0"),  # test_macro_calc
        ("{{ CALC 100 / 4 }}", "25.0"),  # util_macros.macro_calc: str(eval(...))
        ("{{ CALC 5 * 10 + 2 }}", "52"),
        ("{{ BUSINESS_DAYS_FROM Today 5 }}", "2024-03-22"),  # date_str.lower() == 'today'
        ("{{ BUSINESS_DAYS_FROM TODAY -1 %d/%m }}", "14/03"),
        ("{{ BUSINESS_DAYS_FROM 2024-3-4 1 }}", "2024-03-05"),  # strptime("%Y-%m-%d")
        ("{{ HASH test }}", "098f6bcd4621d373cade4e832627b4f6"),  # test_macro_hash
        ("{{ HASH test sha1 }}", "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"),
        ("{{ NOW }}", "2024-03-15T10:30:00.123456"),  # time_macros.macro_now: isoformat()
        ("{{ TIMESTAMP 0 ISO }}", "2024-03-15T10:30:00.123456"),  # format .lower() == 'iso'
        ("{{ TIMESTAMP 0 unix }}", str(int(NOW.timestamp()))),  # any other format: unix
        ("{{ TIMESTAMP 0 %Y }}", str(int(NOW.timestamp()))),
        ("{{ TIMESTAMP -60 MS }}", str(int(NOW.timestamp() * 1000) - 60_000)),
    ],
)
def test_text_and_time_macros(text: str, expected: str, ctx: MacroContext) -> None:
    assert expand(text, ctx) == expected


def test_hash_takes_any_algorithm_hashlib_has(ctx: MacroContext) -> None:
    # util_macros.macro_hash: algorithm in hashlib.algorithms_available
    try:
        wanted = hashlib.new("ripemd160", b"x").hexdigest()
    except ValueError:
        pytest.skip("this OpenSSL has no ripemd160")
    assert expand("{{ HASH x ripemd160 }}", ctx) == wanted


def test_get_of_a_variable_set_in_the_same_text(ctx: MacroContext) -> None:
    # logic_macros.macro_get returns "{{ GET name }}" while unset, and core.process expands it
    # again on the next pass, after SET ran
    assert expand("{{ SET a {{ CALC 1 + 1 }} }} and {{ GET a }}", ctx) == "2 and 2"
    assert expand("{{ GET never }} stays", ctx) == "{{ GET never }} stays"
    assert expand("{{ GET never fallback }}", ctx) == "fallback"


def test_faker_honours_a_faker_locale_variable(ctx: MacroContext) -> None:
    # data_macros.macro_faker: Faker(context.get('FAKER_LOCALE', 'en_US'))
    name = expand("{{ SET FAKER_LOCALE ja_JP }}{{ FAKER name }}", ctx)
    assert name.startswith("ja_JP") and not name[len("ja_JP") :].isascii()
