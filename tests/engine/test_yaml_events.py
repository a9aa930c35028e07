"""The YAML reader built from the parser's events (`yamlmarks._lean`) against PyYAML's
composer (`yamlmarks._composed`), the reader it stands in for: the same data (types
included), the same marks, the same duplicate keys and the same refusals, on every YAML file
of the project's fixtures and of ../shared, and on documents written for the corners."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.engine import yamlmarks
from accord.engine.errors import LoadError, ValidationError

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
FILES = sorted(
    {
        path
        for folder in (ROOT / "tests", ROOT / "workflows", ROOT / "docs", SHARED)
        if folder.is_dir()
        for pattern in ("*.yml", "*.yaml")
        for path in folder.rglob(pattern)
        if ".venv" not in path.parts
    }
)


def typed(value: Any) -> Any:
    """`value` with each scalar's type beside it (1, 1.0 and True compare equal in Python)."""
    if isinstance(value, dict):
        return {typed(key): typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


def outcome(read: Any, text: str, core: bool) -> Any:
    """What a reader makes of `text`: (data, values, keys) or the refusal's text. Text that
    may nest deeply goes to PyYAML's pure-Python composer (`may_nest_deeply`), whose parser
    words a syntax error otherwise than the C one the events reader uses: for that text, a
    refusal is compared by its kind alone."""
    try:
        data, marks = read(text, Path("f.yml"), core=core)
    except (LoadError, ValidationError) as exc:
        said = "" if yamlmarks.may_nest_deeply(text) else str(exc)
        return ("refused", type(exc).__name__, said)
    return typed(data), marks.values, marks.keys


def lean(text: str, path: Path, *, core: bool) -> tuple[Any, yamlmarks.Marks]:
    data, marks = yamlmarks.parse_yaml(text, path, core=core)
    return data, marks


@pytest.mark.parametrize("core", [False, True], ids=["yaml11", "core"])
def test_every_yaml_file_reads_the_same_both_ways(core: bool) -> None:
    assert len(FILES) > 50, "the fixtures and ../shared hold YAML files to compare"
    compared = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert outcome(lean, text, core) == outcome(yamlmarks._composed, text, core), path
        compared += 1
    assert compared == len(FILES)


CORNERS = {
    "empty": "",
    "comment only": "# nothing\n",
    "null document": "~\n",
    "scalar root": "just text\n",
    "list root": "- 1\n- two\n- [3, {four: 4}]\n",
    "types": "a: 1\nb: 1.5\nc: true\nd: yes\ne: null\nf: 010\ng: 0o10\nh: 0x1F\ni: .inf\n"
    "j: -.nan\nk: 2024-01-15\nl: 2024-01-15 10:00:00\nm: '1'\nn: \"true\"\no: 1_000\n",
    "explicit tags": "a: !!str 1\nb: !!int '2'\nc: !!float 3\nd: !!binary aGk=\ne: !!bool yes\n",
    "keys of many kinds": "1: int\n1.5: float\ntrue: bool\nnull: none\n'x y': quoted\n",
    "duplicate keys": "a: 1\nb: 2\na: 3\nc: {d: 1, d: 2}\n",
    "anchors and aliases": "base: &b {x: 1}\nuse: *b\nlist: [*b, *b]\n",
    "merge": "base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\n  y: 4\n",
    "quoted merge key": "'<<': not a merge\n",
    "value key": "=: odd\n",
    "complex key": "? [a, b]\n: pair\n",
    "tagged collections": "a: !!set {x, y}\nb: !!omap [{x: 1}]\nc: !!map {k: v}\nd: !!seq [1]\n",
    "unknown tag": "a: !custom 1\n",
    "bad int tag": "a: !!int nope\n",
    "empty int tag": "a: !!int ''\n",
    "bad bool tag": "a: !!bool x\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "explicit document": "---\na: 1\n...\n",
    "syntax error": "a: [1, 2\nb: 3\n",
    "tab": "a:\n\tb: 1\n",
    "block scalars": "a: |\n  line one\n  line two\nb: >-\n  folded\n  text\n",
    "long line": "a: " + "x" * 70_000 + "\nb: 1\n",
    "deep": "a: " + "[" * 150 + "]" * 150 + "\n",
    "deep then broken": "a: " + "[" * 150 + "]" * 150 + "\nb: [\n",
    "very deep": "[" * 30_000 + "]" * 30_000 + "\n",
    "deep block": "".join("  " * i + f"k{i}:\n" for i in range(120)) + "  " * 120 + "v\n",
    "huge int": "a: " + "9" * 5000 + "\n",
    "unicode": "ключ: значение\nemoji: 🙂\n",
    "control character": "a: \x07b\n",
    "nul": "a: 1\x00\n",
    "byte order mark": "\ufeffa: 1\n",
}


@pytest.mark.parametrize("core", [False, True], ids=["yaml11", "core"])
@pytest.mark.parametrize("name", sorted(CORNERS))
def test_corners_read_the_same_both_ways(name: str, core: bool) -> None:
    text = CORNERS[name]
    assert outcome(lean, text, core) == outcome(yamlmarks._composed, text, core)


def test_the_events_reader_holds_no_node_tree() -> None:
    """A document the events reader takes is never composed: `_lean` gives its data (the
    composer's way is taken only for what `_Unsupported` names)."""
    text = "cases:\n" + "".join(f"  - {{id: c{i}, input: q{i}}}\n" for i in range(50))
    marks = yamlmarks.Marks()
    data = yamlmarks._lean(yamlmarks._Loader, text, None, marks, [])
    assert data is not yamlmarks._FALL_BACK
    assert data["cases"][49] == {"id": "c49", "input": "q49"}
    assert marks.find(("cases", 49, "input")) == (51, 22)
    assert marks.find(("cases", 49, "input"), key=True) == (51, 15)
    fallback = yamlmarks._lean(yamlmarks._Loader, "a: &x 1\nb: *x\n", None, marks, [])
    assert fallback is yamlmarks._FALL_BACK
    assert marks.values == {} and marks.keys == {}


@pytest.mark.parametrize("text", ["a: !!int ''\n", "a: !!float ''\n", "a: !!bool x\n"])
def test_a_value_its_tag_cannot_read_is_refused_with_a_message(text: str) -> None:
    """PyYAML's constructors fail on these with IndexError and KeyError (an internal error,
    exit 70, before): refused as invalid YAML instead."""
    with pytest.raises(LoadError, match="a value its tag cannot read"):
        yamlmarks.parse_yaml(text, Path("f.yml"))
    with pytest.raises(yaml.YAMLError, match="a value YAML cannot read"):
        yamlmarks.load_core(text)


def test_load_core_reads_the_same_both_ways() -> None:
    text = "a: yes\nb: 010\nc: [1, {d: null}]\n"
    loader = yamlmarks._CoreLoader(text)
    try:
        composed = loader.get_single_data()
    finally:
        loader.dispose()
    assert typed(yamlmarks.load_core(text)) == typed(composed)
    with pytest.raises(yaml.YAMLError, match="nested more than 100 levels"):
        yamlmarks.load_core("[" * 300 + "]" * 300)


MUTATIONS = [*":-[]{},&*!\t'\"\n#%|>?@` \\~=<", "<<: *a", "&a ", "*a", "!!str ", "!!int "]
MUTATIONS += ["---\n", "? ", "- ", "\x07", "0o1", "yes", "1e3", ".nan"]


def test_mutated_files_read_the_same_both_ways() -> None:
    """Each file of the fixtures (and the corners) with a few characters put in or taken
    out, 600 times from a fixed seed: the same outcome both ways, refusals included."""
    rnd = random.Random(41)
    texts = [p.read_text(errors="replace") for p in FILES if p.stat().st_size < 20_000]
    texts += [text for text in CORNERS.values() if len(text) < 1000]
    for _ in range(600):
        text = rnd.choice(texts)
        for _ in range(rnd.randint(1, 4)):
            at = rnd.randrange(len(text) + 1)
            if rnd.random() < 0.3:
                text = text[:at] + text[at + 1 :]
            else:
                text = text[:at] + rnd.choice(MUTATIONS) + text[at:]
        core = rnd.random() < 0.5
        assert outcome(lean, text, core) == outcome(yamlmarks._composed, text, core), text
