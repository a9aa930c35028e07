"""Scenario macros: the reference outputs, every macro, nesting, scope, replay and refusals."""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import re
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accord.engine.errors import AccordError
from accord.tasks.suites.frontends.scenarios import macros, readers
from accord.tasks.suites.frontends.scenarios.macros import (
    MacroContext,
    MacroError,
    expand,
    known_macros,
    macro,
)

NOW = datetime(2024, 3, 15, 10, 30, 0)  # a Friday


@pytest.fixture(autouse=True)
def _own_user_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(macros, "USER_MACROS", {})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project.resolve()


@pytest.fixture
def ctx(root: Path) -> MacroContext:
    return MacroContext(project_root=root, seed=7, now=lambda: NOW)


def run(text: str, context: MacroContext) -> str:
    return expand(text, context)


def failure(text: str, context: MacroContext) -> MacroError:
    with pytest.raises(MacroError) as caught:
        expand(text, context)
    return caught.value


# The reference outputs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{{ LOOP 3 "Index [[ GET LOOP_INDEX ]]" "-" }}', "Index 0-Index 1-Index 2"),
        ("{{ CALC 5 * 10 + 2 }}", "52"),
        ("{{ URL_ENCODE hello world&more }}", "hello%20world%26more"),
        ("{{ HASH test }}", hashlib.md5(b"test").hexdigest()),
        ("{{ IF 0 Yes No }}", "No"),
    ],
)
def test_reference_outputs(text: str, expected: str, ctx: MacroContext) -> None:
    assert run(text, ctx) == expected


def test_set_in_input_get_in_expected_output(ctx: MacroContext) -> None:
    prompt = run("Create a user named {{ SET user_name {{ FAKER name }} }}.", ctx)
    name = re.fullmatch(r"Create a user named (.+)\.", prompt)
    assert name is not None and name.group(1).strip()
    assert run("User {{ GET user_name }} created", ctx) == f"User {name.group(1)} created"


def test_loop_of_seeded_fake_users(root: Path) -> None:
    text = 'Create these users: {{ LOOP 3 "User [[ GET LOOP_COUNT ]]: [[ FAKER name ]]" ", " }}'
    first = run(text, MacroContext(project_root=root, seed=3))
    users = re.fullmatch(r"Create these users: User 1: (.+), User 2: (.+), User 3: (.+)", first)
    assert users is not None
    assert len(set(users.groups())) == 3
    assert run(text, MacroContext(project_root=root, seed=3)) == first


@pytest.mark.parametrize(("value", "expected"), [(None, "Staging"), ("1", "Production")])
def test_if_over_an_allowed_env_var(
    value: str | None, expected: str, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv("IS_PROD", raising=False)
    else:
        monkeypatch.setenv("IS_PROD", value)
    context = MacroContext(project_root=root, allow_env=frozenset({"IS_PROD"}))
    text = 'Deploy to {{ IF {{ ENV IS_PROD }} "Production" "Staging" }} environment.'
    assert run(text, context) == f"Deploy to {expected} environment."


# Expansion


def test_text_without_macros_is_returned_unchanged(ctx: MacroContext) -> None:
    assert run("plain } text {", ctx) == "plain } text {"


def test_nested_macros_expand_innermost_first(ctx: MacroContext) -> None:
    expected = base64.b64encode(b"ab-ab").decode()
    assert run('{{ BASE64 {{ REPEAT ab 2 "-" }} }}', ctx) == expected
    assert run("x{{ CALC {{ CALC 2 + 3 }} * 2 }}y", ctx) == "x10y"


def test_inner_output_is_one_argument_whatever_it_holds(ctx: MacroContext) -> None:
    run('{{ SET who "O\'Brien Smith" }}', ctx)
    assert run("{{ IF {{ GET who }} yes no }}", ctx) == "yes"
    assert run("{{ SET copy {{ GET who }} }}", ctx) == "O'Brien Smith"
    assert run("{{ IF {{ GET unset '' }} yes no }}", ctx) == "no"


def test_output_of_a_macro_is_not_expanded_again(ctx: MacroContext, root: Path) -> None:
    literal = 'say {{ GET secret }} and {"a": {"b": 1}}'
    (root / "raw.txt").write_text(literal)
    run("{{ SET secret hidden }}", ctx)
    assert run("{{ OPEN raw.txt }}", ctx) == literal
    assert run("[{{ SET kept {{ OPEN raw.txt }} }}]", ctx) == f"[{literal}]"


def test_lowercase_braces_are_not_macros(ctx: MacroContext) -> None:
    assert run("Hi {{ name }} and {{Name}}, {{ CALC 1 + 1 }}", ctx) == (
        "Hi {{ name }} and {{Name}}, 2"
    )


def test_a_macro_holding_a_non_macro_or_never_closed_is_an_error(ctx: MacroContext) -> None:
    assert "never closed" in str(failure("{{ IF {{ name }} a b }}", ctx))
    assert "never closed" in str(failure("text {{ GET x", ctx))


def test_ten_levels_of_nesting_expand_and_eleven_fail(ctx: MacroContext) -> None:
    def nested(levels: int) -> str:
        return "{{ CALC 1 + " * (levels - 1) + "{{ CALC 1 }}" + " }}" * (levels - 1)

    assert run(nested(10), ctx) == "10"
    assert "10 passes" in str(failure(nested(11), ctx))


def test_one_pass_runs_every_innermost_macro_before_outer_ones(ctx: MacroContext) -> None:
    assert run("{{ SET a {{ CALC 1 }} }}/{{ GET a none }}", ctx) == "1/none"
    assert run("{{ GET a }}", ctx) == "1"


def test_unclosed_quote_names_the_macro(ctx: MacroContext) -> None:
    error = failure('{{ REPEAT "ab 2 }}', ctx)
    assert error.macro == "REPEAT"
    assert "cannot be split" in str(error)
    assert "usage: {{ REPEAT text count [separator] }}" in str(error)


# Errors


def test_missing_file_message_names_macro_file_root_and_usage(
    ctx: MacroContext, root: Path
) -> None:
    error = failure("{{ OPEN missing.txt }}", ctx)
    assert str(error) == (
        f"macro {{{{ OPEN missing.txt }}}}: file 'missing.txt' not found under {root} "
        "(usage: {{ OPEN file_path [file_type] }})"
    )
    assert isinstance(error, AccordError)
    assert error.permanent
    assert (error.macro, error.args, error.usage) == (
        "OPEN",
        ["missing.txt"],
        "OPEN file_path [file_type]",
    )


def test_macro_error_survives_pickling(ctx: MacroContext) -> None:
    error = failure("{{ OPEN missing.txt }}", ctx)
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert copy.args == ["missing.txt"]


def test_unknown_macro_lists_known_names_sorted(ctx: MacroContext) -> None:
    error = failure("{{ NOPE 1 }}", ctx)
    names = known_macros(ctx)
    assert names == sorted(names) and "OPEN" in names and "LOOP" in names
    assert f"known macros: {', '.join(names)}" in str(error)
    assert error.macro == "NOPE"


def test_every_listed_macro_exists_with_a_usage() -> None:
    expected = {
        "OPEN", "CONCAT", "SAMPLE", "IMAGE", "LIST_FILES", "TRUNCATE", "REPEAT", "BASE64",
        "JSON_ESCAPE", "URL_ENCODE", "HASH", "JSON_EXTRACT", "TEMPLATE", "DATE", "NOW",
        "TIMESTAMP", "BUSINESS_DAYS_FROM", "UUID", "RANDOM_INT", "RANDOM_CHOICE", "FAKER",
        "FAKER_LOCALE", "SET", "GET", "IF", "LOOP", "HTTP_GET", "SQL_QUERY", "PATH", "ENV",
        "CALC",
    }  # fmt: skip
    assert set(macros.BUILTINS) == expected
    for name, builtin in macros.BUILTINS.items():
        assert builtin.usage.split()[0] == name


@pytest.mark.parametrize(
    ("text", "problem", "usage"),
    [
        ("{{ OPEN }}", "takes 1 to 2 argument(s), got 0", "OPEN file_path [file_type]"),
        ("{{ UUID extra }}", "takes 0 argument(s), got 1", "UUID"),
        ("{{ CONCAT }}", "takes at least 1 argument(s), got 0", "CONCAT file1 [file2 ...]"),
        ("{{ REPEAT ab many }}", "count must be an integer, got 'many'", "REPEAT"),
        ("{{ LOOP 100001 x }}", "count must be from 0 to 10000", "LOOP count template"),
    ],
)
def test_wrong_arguments_show_the_usage(
    text: str, problem: str, usage: str, ctx: MacroContext
) -> None:
    message = str(failure(text, ctx))
    assert problem in message
    assert f"(usage: {{{{ {usage}" in message


# Files


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF whose content stream draws `text` in Helvetica."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    pdf = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    pdf += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return pdf


def test_open_text_and_file_type_override(ctx: MacroContext, root: Path) -> None:
    (root / "notes.txt").write_text("line one\nline two")
    (root / "notes.data").write_text("other text")
    assert run("{{ OPEN notes.txt }}", ctx) == "line one\nline two"
    assert run("{{ OPEN notes.data }}", ctx) == "other text"
    assert run("{{ OPEN notes.data text }}", ctx) == "other text"
    assert "unknown file_type 'weird'" in str(failure("{{ OPEN notes.txt weird }}", ctx))


def test_open_pdf(ctx: MacroContext, root: Path) -> None:
    (root / "doc.pdf").write_bytes(minimal_pdf("Hello PDF"))
    assert run("{{ OPEN doc.pdf }}", ctx).strip() == "Hello PDF"


def test_open_docx_paragraphs_and_tables(ctx: MacroContext, root: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Hello docx")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "cell A"
    table.rows[0].cells[1].text = "cell B"
    document.save(str(root / "report.docx"))
    # reference: file_macros._read_docx (blocks joined by a blank line, rows as | a | b |)
    assert run("{{ OPEN report.docx }}", ctx) == "Hello docx\n\n| cell A | cell B |"


def test_open_pptx_every_shape(ctx: MacroContext, root: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Deck Title"
    slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1)).text_frame.text = "Box"
    second = deck.slides.add_slide(deck.slide_layouts[6])
    second.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text = "Second slide"
    deck.save(str(root / "deck.pptx"))
    assert run("{{ OPEN deck.pptx }}", ctx).split("\n") == ["Deck Title", "Box", "Second slide"]


def test_open_xlsx_sheets_as_csv(ctx: MacroContext, root: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "People"
    sheet.append(["name", "age"])
    sheet.append(["Ada", 36])
    book.create_sheet("Other").append(["x", None, "z"])
    book.save(root / "people.xlsx")
    # reference: file_macros._read_excel ("Sheet: NAME\n" + to_csv(index=False), "\n\n" between)
    assert run("{{ OPEN people.xlsx }}", ctx) == (
        "Sheet: People\nname,age\nAda,36\n\n\nSheet: Other\nx,Unnamed: 1,z\n"
    )


@pytest.mark.parametrize(("name", "modern"), [("old.ppt", "pptx"), ("old.xls", "xlsx")])
def test_old_office_formats_ask_for_conversion(
    name: str, modern: str, ctx: MacroContext, root: Path
) -> None:
    (root / name).write_bytes(b"\xd0\xcf\x11\xe0 old binary")
    assert f"convert it to {modern}" in str(failure(f"{{{{ OPEN {name} }}}}", ctx))


def test_image_ocr_without_tesseract_says_so(
    ctx: MacroContext, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    (root / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert "tesseract is not installed" in str(failure("{{ OPEN scan.png }}", ctx))


def test_concat(ctx: MacroContext, root: Path) -> None:
    (root / "a.txt").write_text("A")
    (root / "b.txt").write_text("B")
    # reference: file_macros.macro_concat joins with "\n\n---\n\n"
    assert run("{{ CONCAT a.txt b.txt }}", ctx) == "A\n\n---\n\nB"
    assert "'c.txt' not found" in str(failure("{{ CONCAT a.txt c.txt }}", ctx))


def test_sample_first_and_random_lines(ctx: MacroContext, root: Path) -> None:
    (root / "lines.txt").write_text("\n".join(f"line {i}" for i in range(20)))
    # reference: file_macros.macro_sample ("".join of readlines(): the lines keep their ends)
    assert run("{{ SAMPLE lines.txt 2 }}", ctx) == "line 0\nline 1\n"
    picked = run("{{ SAMPLE lines.txt 5 random }}", ctx).splitlines()
    assert len(set(picked)) == 5
    assert [int(line.split()[1]) for line in picked] != [0, 1, 2, 3, 4]
    # only the word `random` samples (args[2].lower() == 'random'): any other is the first lines
    assert run("{{ SAMPLE lines.txt 3 first }}", ctx) == "line 0\nline 1\nline 2\n"
    assert run("{{ SAMPLE lines.txt 3 yes }}", ctx) == "line 0\nline 1\nline 2\n"
    assert run("{{ SAMPLE lines.txt 50 }}", ctx).count("\n") == 19


def test_image_is_base64_of_the_bytes(ctx: MacroContext, root: Path) -> None:
    (root / "pic.png").write_bytes(bytes(range(256)))
    assert run("{{ IMAGE pic.png }}", ctx) == base64.b64encode(bytes(range(256))).decode()


def test_list_files(ctx: MacroContext, root: Path) -> None:
    (root / "data" / "sub").mkdir(parents=True)
    for name in ("b.json", "a.txt", "sub/c.txt"):
        (root / "data" / name).write_text("x")
    # reference: file_macros.macro_list_files (os.listdir: folders too; fnmatch on names)
    assert run("{{ LIST_FILES data }}", ctx) == '["a.txt", "b.json", "sub"]'
    assert run('{{ LIST_FILES data "*.txt" }}', ctx) == '["a.txt"]'
    assert "not found" in str(failure("{{ LIST_FILES nowhere }}", ctx))


# Text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{{ TRUNCATE "Hello world" 8 }}', "Hello..."),
        ('{{ TRUNCATE "Hello world" 11 }}', "Hello world"),
        ('{{ TRUNCATE "Hello world" 7 "~" }}', "Hello ~"),
        ("{{ TRUNCATE abcdef 2 }}", "ab"),
        ("{{ TRUNCATE article.txt 500 ... }}", "article.txt"),
        ("{{ REPEAT ab 3 }}", "ababab"),
        ('{{ REPEAT ab 3 ", " }}', "ab, ab, ab"),
        ("{{ REPEAT ab 0 }}", ""),
        ("{{ BASE64 hello world }}", "aGVsbG8gd29ybGQ="),
        ("{{ JSON_ESCAPE 'say \"hi\"\\' }}", 'say \\"hi\\"\\\\'),
        ("{{ URL_ENCODE a/b?c=d }}", "a/b%3Fc%3Dd"),  # urllib.parse.quote: "/" is safe
        ("{{ HASH test sha256 }}", hashlib.sha256(b"test").hexdigest()),
        ("{{ HASH test shake_128 }}", hashlib.shake_128(b"test").hexdigest(32)),
    ],
)
def test_text_macros(text: str, expected: str, ctx: MacroContext) -> None:
    assert run(text, ctx) == expected


def test_unknown_hash_algorithm_lists_the_available_ones(ctx: MacroContext) -> None:
    message = str(failure("{{ HASH test nosuchhash }}", ctx))
    assert "unknown hash algorithm 'nosuchhash'" in message
    assert "md5, " in message


# Data


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.users[0].name", "Ada"),
        ("$.users[-1].age", "41"),
        ("$.users[*].name", '["Ada", "Bob"]'),
        ("$['meta']['k v']", "1"),
        ("$.meta.*", "[1]"),  # a wildcard gives a list, as the reference's
        ("$.users[0]", '{"name": "Ada", "age": 36}'),
        ("$", '{"users": [{"name": "Ada", "age": 36}, {"name": "Bob", "age": 41}], '
         '"meta": {"k v": 1}}'),
    ],
)  # fmt: skip
def test_json_extract(path: str, expected: str, ctx: MacroContext, root: Path) -> None:
    document = {"users": [{"name": "Ada", "age": 36}, {"name": "Bob", "age": 41}]}
    (root / "data.json").write_text(json.dumps({**document, "meta": {"k v": 1}}))
    assert run(f'{{{{ JSON_EXTRACT data.json "{path}" }}}}', ctx) == expected


def test_json_extract_without_a_match_names_the_path(ctx: MacroContext, root: Path) -> None:
    (root / "data.json").write_text('{"users": []}')
    # reference: file_macros._jsonpath_extract gives None for a path that finds nothing
    assert run("{{ JSON_EXTRACT data.json $.users[0] }}", ctx) == "None"
    assert "must start with '$'" in str(failure("{{ JSON_EXTRACT data.json users }}", ctx))


def test_template(ctx: MacroContext, root: Path) -> None:
    (root / "greet.txt").write_text("Hello {name}, you are {age}.")
    assert run("""{{ TEMPLATE greet.txt '{"name": "Ada", "age": 36}' }}""", ctx) == (
        "Hello Ada, you are 36."
    )
    # reference: file_macros.macro_template replaces each given {key}; the rest stays
    assert run("""{{ TEMPLATE greet.txt '{"name": "Ada"}' }}""", ctx) == (
        "Hello Ada, you are {age}."
    )
    assert "not JSON" in str(failure("{{ TEMPLATE greet.txt nope }}", ctx))


# Dates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{ DATE }}", "2024-03-15"),
        ("{{ DATE %d/%m/%Y 3 }}", "18/03/2024"),
        ('{{ DATE "" -1 }}', "2024-03-14"),
        ("{{ NOW }}", "2024-03-15T10:30:00"),
        ("{{ NOW %H:%M }}", "10:30"),
        ("{{ TIMESTAMP }}", str(int(NOW.timestamp()))),
        ("{{ TIMESTAMP 60 iso }}", "2024-03-15T10:31:00"),
        ("{{ TIMESTAMP 1 ms }}", str(int(NOW.timestamp()) * 1000 + 1000)),
        ("{{ BUSINESS_DAYS_FROM today 1 }}", "2024-03-18"),
        ("{{ BUSINESS_DAYS_FROM 2024-03-15 5 }}", "2024-03-22"),
        ("{{ BUSINESS_DAYS_FROM 2024-03-18 -1 }}", "2024-03-15"),
        ("{{ BUSINESS_DAYS_FROM 2024-03-16 1 %d.%m }}", "18.03"),
        ("{{ BUSINESS_DAYS_FROM 2024-03-16 0 }}", "2024-03-16"),
    ],
)
def test_date_macros_use_the_context_clock(text: str, expected: str, ctx: MacroContext) -> None:
    assert run(text, ctx) == expected


def test_business_days_refuses_a_bad_date(ctx: MacroContext) -> None:
    assert "'today' or YYYY-MM-DD" in str(failure("{{ BUSINESS_DAYS_FROM 15/03/2024 1 }}", ctx))


# Randomness


def test_same_seed_replays_and_another_seed_differs(root: Path) -> None:
    (root / "lines.txt").write_text("\n".join(str(i) for i in range(50)))
    text = (
        "{{ UUID }} {{ RANDOM_INT 1 1000000 }} {{ FAKER name }} {{ FAKER_LOCALE de_DE city }} "
        "{{ RANDOM_CHOICE a b c d e f g h }} {{ SAMPLE lines.txt 3 random }}"
    )
    first = run(text, MacroContext(project_root=root, seed=11))
    assert run(text, MacroContext(project_root=root, seed=11)) == first
    assert run(text, MacroContext(project_root=root, seed=12)) != first
    fake = "{{ FAKER name }} {{ FAKER_LOCALE de_DE city }} {{ FAKER pyint }}"
    names = {run(fake, MacroContext(project_root=root, seed=seed)) for seed in (1, 2, 3, 1)}
    assert len(names) == 3


def test_uuid_is_a_version_4_uuid(ctx: MacroContext) -> None:
    value = run("{{ UUID }}", ctx)
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value
    )
    assert run("{{ UUID }}", ctx) != value


def test_random_int_and_choice(ctx: MacroContext) -> None:
    values = {int(run("{{ RANDOM_INT 1 3 }}", ctx)) for _ in range(40)}
    assert values == {1, 2, 3}
    assert run("{{ RANDOM_INT 5 5 }}", ctx) == "5"
    assert "above max" in str(failure("{{ RANDOM_INT 5 1 }}", ctx))
    assert {run("{{ RANDOM_CHOICE x y }}", ctx) for _ in range(30)} == {"x", "y"}


def test_faker_converts_numeric_arguments(ctx: MacroContext) -> None:
    assert run("{{ FAKER random_int 3 3 }}", ctx) == "3"
    assert len(run("{{ FAKER pystr 4 4 }}", ctx)) == 4


def test_faker_refuses_unknown_providers_and_locales(ctx: MacroContext) -> None:
    assert "unknown Faker provider 'no_such'" in str(failure("{{ FAKER no_such }}", ctx))
    assert "unknown Faker provider" in str(failure("{{ FAKER seed_instance 1 }}", ctx))
    assert "unknown Faker locale 'xx_YY'" in str(failure("{{ FAKER_LOCALE xx_YY name }}", ctx))


def test_faker_locale(ctx: MacroContext) -> None:
    name = run("{{ FAKER_LOCALE ja_JP name }}", ctx)
    assert name and not name.isascii()


# Variables and logic


def test_set_returns_value_and_get_defaults(ctx: MacroContext) -> None:
    assert run("{{ SET greeting hello there }}", ctx) == "hello there"
    # reference: logic_macros.macro_get leaves an unset GET without default as written
    assert run("{{ GET greeting }}|{{ GET other fallback }}|{{ GET other }}", ctx) == (
        "hello there|fallback|{{ GET other }}"
    )
    assert ctx.variables["greeting"] == "hello there"


@pytest.mark.parametrize("falsy", ['""', "0", "false", "No", "Off"])  # logic_macros.macro_if
def test_if_false_values(falsy: str, ctx: MacroContext) -> None:
    assert run(f"{{{{ IF {falsy} yes no }}}}", ctx) == "no"


@pytest.mark.parametrize("truthy", ["1", "yes", "anything", "-1", "none", "null"])
def test_if_true_values(truthy: str, ctx: MacroContext) -> None:
    assert run(f"{{{{ IF {truthy} yes no }}}}", ctx) == "yes"
    assert run("{{ IF 0 yes }}", ctx) == ""


def test_loop_defaults_nesting_and_restored_counters(ctx: MacroContext) -> None:
    assert run('{{ LOOP 3 "[[ GET LOOP_COUNT ]]" }}', ctx) == "123"
    assert run('{{ LOOP 0 "x" }}', ctx) == ""
    # an inner LOOP's [[ ]] are the outer's too: they expand with the outer loop's index
    assert run("""{{ LOOP 2 '<[[ LOOP 2 "[[ GET LOOP_INDEX ]]" ]]>' }}""", ctx) == "<00><11>"
    run("{{ SET LOOP_INDEX outer }}", ctx)
    run('{{ LOOP 2 "[[ GET LOOP_INDEX ]]" }}', ctx)
    assert run("{{ GET LOOP_INDEX }}|{{ GET LOOP_COUNT none }}", ctx) == "outer|none"


# Outside world


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/missing":
            self.send_error(404, "Not Found")
            return
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://forbidden.example/")
            self.end_headers()
            return
        body = f"hello http {self.headers.get('X-Test', '-')}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def test_http_get_from_an_allowed_host(server: str, root: Path) -> None:
    context = MacroContext(project_root=root, allow_hosts=frozenset({"127.0.0.1"}))
    assert run(f"{{{{ HTTP_GET {server}/ok }}}}", context) == "hello http -"
    headers = """'{"X-Test": "yes"}'"""
    assert run(f"{{{{ HTTP_GET {server}/ok {headers} }}}}", context) == "hello http yes"
    assert "HTTP 404" in str(failure(f"{{{{ HTTP_GET {server}/missing }}}}", context))
    refused = str(failure(f"{{{{ HTTP_GET {server}/redirect }}}}", context))
    assert "'forbidden.example' is not in allow_hosts" in refused


def test_http_get_refuses_a_host_not_allowed(server: str, root: Path) -> None:
    context = MacroContext(project_root=root, allow_hosts=frozenset({"example.com"}))
    message = str(failure(f"{{{{ HTTP_GET {server}/ok }}}}", context))
    assert "host '127.0.0.1' is not in allow_hosts" in message
    assert "must be http" in str(failure("{{ HTTP_GET file:///etc/passwd }}", context))


@pytest.mark.parametrize(
    ("host", "allowed"),
    [("api.example.com", True), ("example.com", False), ("evilexample.com", False)],
)
def test_allow_hosts_wildcards(host: str, allowed: bool) -> None:
    assert readers.host_allowed(host, frozenset({"*.example.com"})) is allowed


@pytest.fixture
def database(root: Path) -> Path:
    path = root / "app.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (name TEXT, age INTEGER)")
        connection.executemany("INSERT INTO users VALUES (?, ?)", [("Bob", 41), ("Ada", 36)])
    connection.close()
    return path


def test_sql_query_returns_row_objects(ctx: MacroContext, database: Path) -> None:
    rows = json.loads(run('{{ SQL_QUERY app.db "SELECT name, age FROM users ORDER BY age" }}', ctx))
    assert rows == [{"name": "Ada", "age": 36}, {"name": "Bob", "age": 41}]


def test_sql_query_is_read_only(ctx: MacroContext, database: Path, tmp_path: Path) -> None:
    assert "readonly" in str(failure('{{ SQL_QUERY app.db "DELETE FROM users" }}', ctx))
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    attach = f"{{{{ SQL_QUERY app.db \"ATTACH DATABASE '{other}' AS x\" }}}}"
    assert "not authorized" in str(failure(attach, ctx))
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT count(*) FROM users").fetchone() == (2,)
    connection.close()


# Utilities


def test_path_resolves_inside_the_root(ctx: MacroContext, root: Path) -> None:
    (root / "data").mkdir()
    assert run("{{ PATH data/a.txt }}", ctx) == str(root / "data" / "a.txt")
    assert run("{{ PATH a.txt data }}", ctx) == str(root / "data" / "a.txt")
    inside = str(root / "data")
    assert run(f"{{{{ PATH {inside} }}}}", ctx) == inside


def test_env_reads_allowed_variables_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIO_REGION", "eu")
    monkeypatch.delenv("SCENARIO_UNSET", raising=False)
    allowed = frozenset({"SCENARIO_REGION", "SCENARIO_UNSET"})
    context = MacroContext(project_root=root, allow_env=allowed)
    assert run("{{ ENV SCENARIO_REGION }}", context) == "eu"
    assert run("{{ ENV SCENARIO_UNSET fallback }}|{{ ENV SCENARIO_UNSET }}", context) == (
        "fallback|"
    )
    message = str(failure("{{ ENV HOME }}", context))
    assert "variable 'HOME' is not in allow_env" in message


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("10 / 2", "5.0"),  # Python's own number, as util_macros.macro_calc's eval
        ("1 / 4", "0.25"),
        ("7 // 2", "3"),
        ("7 % 4", "3"),
        ("2 ** 10", "1024"),
        ("-(3 + 4) * 2", "-14"),
        ("round(2.567, 2)", "2.57"),
        ("min(3, 1, 2) + max(1, 5)", "6"),
        ("abs(-2.5)", "2.5"),
    ],
)
def test_calc(expression: str, expected: str, ctx: MacroContext) -> None:
    assert run(f'{{{{ CALC "{expression}" }}}}', ctx) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').getcwd()",
        "(1).real",
        "'a' * 3",
        "1 < 2",
        "x + 1",
        "1 / 0",
        "[1, 2]",
        "True + 1",
        "lambda: 1",
    ],
)
def test_calc_refuses_anything_but_arithmetic(expression: str, ctx: MacroContext) -> None:
    error = failure(f'{{{{ CALC "{expression}" }}}}', ctx)
    assert error.macro == "CALC"
    assert error.args == [expression]


# Staying inside the project root


@pytest.fixture
def outside(tmp_path: Path, root: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("secret")
    (root / "link.txt").symlink_to(secret)
    (root / "linkdir").symlink_to(secret.parent)
    return secret


@pytest.mark.parametrize(
    "call",
    [
        "OPEN {path}",
        "CONCAT {path}",
        "SAMPLE {path} 1",
        "IMAGE {path}",
        "JSON_EXTRACT {path} $",
        "TEMPLATE {path} {{}}",
        "SQL_QUERY {path} 'SELECT 1'",
        "PATH {path}",
    ],
)
@pytest.mark.parametrize("path", ["../outside/secret.txt", "link.txt", "{absolute}"])
def test_paths_outside_the_root_are_refused(
    call: str, path: str, ctx: MacroContext, root: Path, outside: Path
) -> None:
    path = path.format(absolute=outside)
    text = "{{ " + call.replace("{path}", path).replace("{{}}", "'{\"a\": 1}'") + " }}"
    message = str(failure(text, ctx))
    assert f"path '{path}' is outside the project root {root}" in message
    assert "secret" not in message.replace("secret.txt", "")


@pytest.mark.parametrize("directory", ["../outside", "linkdir"])
def test_list_files_outside_the_root_is_refused(
    directory: str, ctx: MacroContext, root: Path, outside: Path
) -> None:
    message = str(failure(f"{{{{ LIST_FILES {directory} }}}}", ctx))
    assert f"path '{directory}' is outside the project root {root}" in message
    assert run('{{ LIST_FILES . "../*" }}', ctx) == "[]"  # a pattern matches names only


# User macros


def test_user_macros_from_the_context(root: Path) -> None:
    def greet(name: str, greeting: str = "Hello") -> str:
        return f"{greeting}, {name}!"

    context = MacroContext(
        project_root=root,
        macro_functions={"GREET": greet, "COUNT": lambda *words: len(words), "NOTHING": print},
    )
    assert run("{{ GREET Ada }} {{ GREET Bob Hi }} {{ COUNT a b c }}", context) == (
        "Hello, Ada! Hi, Bob! 3"
    )
    assert run("[{{ NOTHING }}]", context) == "[]"
    assert {"GREET", "COUNT"} <= set(known_macros(context))
    error = failure("{{ GREET }}", context)
    assert error.usage == "GREET name [greeting]"
    assert "TypeError" in str(error)


def test_a_raising_user_macro_becomes_a_macro_error(root: Path) -> None:
    def explode(*args: str) -> str:
        raise RuntimeError("boom")

    context = MacroContext(project_root=root, macro_functions={"EXPLODE": explode})
    with pytest.raises(MacroError) as caught:
        expand("before {{ EXPLODE a 'b c' }} after", context)
    error = caught.value
    assert str(error).startswith("macro {{ EXPLODE a 'b c' }}: RuntimeError: boom")
    assert (error.macro, error.args) == ("EXPLODE", ["a", "b c"])
    assert isinstance(error.__cause__, RuntimeError)


def test_user_macros_may_not_take_built_in_or_invalid_names(root: Path) -> None:
    with pytest.raises(MacroError, match="'OPEN' is a built-in macro's name"):
        MacroContext(project_root=root, macro_functions={"OPEN": str})
    with pytest.raises(MacroError, match=r"must match \[A-Z_\]"):
        MacroContext(project_root=root, macro_functions={"lower": str})
    with pytest.raises(MacroError, match="'CALC' is a built-in macro's name"):
        macro("CALC")(str)


def test_decorator_registers_for_every_context(root: Path) -> None:
    @macro("SHOUT", usage="SHOUT text...")
    def shout(*words: str) -> str:
        return " ".join(words).upper()

    assert shout("a") == "A"
    assert run("{{ SHOUT make it loud }}", MacroContext(project_root=root)) == "MAKE IT LOUD"
    assert "SHOUT" in known_macros()
    assert macros.USER_MACROS["SHOUT"].usage == "SHOUT text..."

    def other(*words: str) -> str:
        return ""

    with pytest.raises(MacroError, match="already registered"):
        macro("SHOUT")(other)


def test_context_macros_win_over_decorated_ones(root: Path) -> None:
    macro("WHO")(lambda: "decorator")
    context = MacroContext(project_root=root, macro_functions={"WHO": lambda: "context"})
    assert run("{{ WHO }}", context) == "context"
    assert run("{{ WHO }}", MacroContext(project_root=root)) == "decorator"
