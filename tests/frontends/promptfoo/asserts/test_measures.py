"""promptfoo's structural and scored assertions: regex, is-json, contains-json,
is-valid-openai-tools-call, levenshtein, rouge-n, bleu, cost, latency. Expected values are
promptfoo 0.118's (file and function named at each); ROUGE and BLEU are also compared with
promptfoo's own code where its npm install is present."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from accord.tasks.evaluators.cases import Output
from accord.tasks.suites.frontends.promptfoo.asserts.measures import bleu, rouge_n
from tests.frontends.promptfoo.asserts.harness import score

PROMPTFOO_HOME = Path.home() / ".cache" / "accord-bench" / "promptfoo"


def pairs_of(
    tmp_path: Path, asserts: list[dict[str, object]], output: str | Output, **kw: object
) -> list[tuple[float | None, bool | None]]:
    found = score(tmp_path, asserts, output, **kw)  # type: ignore[arg-type]
    return [(f.score, f.passed) for f in found.findings]


def test_regex_is_searched_anywhere_and_a_bad_pattern_fails(tmp_path: Path) -> None:
    # regex.ts handleRegex: new RegExp(value).test(output); an invalid pattern is a failure
    # with "Invalid regex pattern: ..." (not an error)
    found = score(
        tmp_path,
        [
            {"type": "regex", "value": r"\d{3}-\d{4}"},
            {"type": "not-regex", "value": r"^call"},
            {"type": "regex", "value": r"(?<area>\d{3})-"},
            {"type": "regex", "value": "(unclosed"},
        ],
        "call 555-1234",
    )
    assert [(f.score, f.passed) for f in found.findings] == [
        (1.0, True), (0.0, False), (1.0, True), (0.0, False),
    ]  # fmt: skip
    assert found.findings[3].reason.startswith("Invalid regex pattern: ")


def test_is_json_with_and_without_a_schema(tmp_path: Path) -> None:
    # json.ts handleIsJson: JSON.parse, then the schema (an object, or YAML text of one)
    schema = {"type": "object", "required": ["name"], "properties": {"age": {"type": "number"}}}
    got = pairs_of(
        tmp_path,
        [
            {"type": "is-json"},
            {"type": "not-is-json"},
            {"type": "is-json", "value": schema},
            {"type": "is-json", "value": "type: object\nrequired: [age]\n"},
        ],
        '{"name": "Ada", "age": 36}',
    )
    assert got == [(1.0, True), (0.0, False), (1.0, True), (1.0, True)]
    bad = score(tmp_path, [{"type": "is-json", "value": schema}], '{"age": "old"}')
    assert bad.findings[0].passed is False
    assert bad.findings[0].reason.startswith("JSON does not conform to the provided schema.")
    assert pairs_of(tmp_path, [{"type": "is-json"}], "{not json") == [(0.0, False)]


def test_contains_json_finds_objects_in_prose(tmp_path: Path) -> None:
    # util/json.ts extractJsonObjects: from each '{' to its balancing '}', a truncated object
    # closed with the braces it lacks; json.ts handleContainsJson: any object valid passes
    schema = {"type": "object", "required": ["b"]}
    text = 'Sure! Here: {"a": 1} and then {"b": {"c": 2}} done'
    got = pairs_of(
        tmp_path,
        [
            {"type": "contains-json"},
            {"type": "contains-json", "value": schema},
            {"type": "not-contains-json"},
        ],
        text,
    )
    assert got == [(1.0, True), (1.0, True), (0.0, False)]
    assert pairs_of(tmp_path, [{"type": "contains-json"}], 'cut off: {"a": {"b": 1') == [
        (1.0, True)
    ]
    assert pairs_of(tmp_path, [{"type": "contains-json"}], "no braces here") == [(0.0, False)]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def test_tools_call_is_checked_against_the_providers_tools(tmp_path: Path) -> None:
    # openai.ts handleIsValidOpenAiToolsCall + providers/openai/util.ts validateFunctionCall
    good = Output(text="", tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}])
    wrong_args = Output(text="", tool_calls=[{"name": "get_weather", "arguments": {"town": 1}}])
    unknown = Output(text="", tool_calls=[{"name": "book_flight", "arguments": {}}])
    entry = [{"type": "is-valid-openai-tools-call"}]
    config = {"tools": TOOLS}
    assert pairs_of(tmp_path, entry, good, provider_config=config) == [(1.0, True)]
    bad = score(tmp_path, entry, wrong_args, provider_config=config)
    assert bad.findings[0].passed is False
    assert bad.findings[0].reason.startswith('Call to "get_weather" does not match schema')
    missing = score(tmp_path, entry, unknown, provider_config=config)
    assert (
        missing.findings[0].reason
        == 'Called "book_flight", but there is no function with that name'
    )
    text = score(tmp_path, entry, "just words", provider_config=config)
    assert text.findings[0].reason == (
        'OpenAI did not return a valid-looking tools response: "just words"'
    )


def test_levenshtein_threshold_default_five_and_not_ignored(tmp_path: Path) -> None:
    # levenshtein.ts: distance <= (threshold ?? 5); the handler never reads `inverse`
    got = pairs_of(
        tmp_path,
        [
            {"type": "levenshtein", "value": "kitten"},
            {"type": "levenshtein", "value": "kitten", "threshold": 2},
            {"type": "not-levenshtein", "value": "kitten"},
        ],
        "sitting",
    )
    assert got == [(1.0, True), (0.0, False), (1.0, True)]
    found = score(tmp_path, [{"type": "levenshtein", "value": "kitten", "threshold": 2}], "sitting")
    assert found.findings[0].reason == "Levenshtein distance 3 is greater than threshold 2"


# (candidate, reference, js-rouge 3.2.3 `n(c, r, {})`, promptfoo bleu.ts calculateBleuScore
# (c, [r])), the numbers printed by node on promptfoo 0.118.0's install
SCORES = [
    ("The quick brown fox jumps over the lazy dog.",
     "The quick brown fox jumped over the lazy dog.", 0.9, 0.5969491792019646),
    ("I can't believe it's not butter!", "I cannot believe it is not butter.",
     0.5555555555555556, 0.000005454872071809198),
    ("Paris is the capital of France. It is big.", "The capital of France is Paris.",
     0.6666666666666666, 0.006311969078225887),
    ('Hello, world: (a test) "quoted" here', "hello world a test quoted here",
     0.5555555555555556, 0.0000035930411196308442),
]  # fmt: skip


@pytest.mark.parametrize(("candidate", "reference", "rouge", "bleu_score"), SCORES)
def test_rouge_and_bleu_are_promptfoos_numbers(
    candidate: str, reference: str, rouge: float, bleu_score: float
) -> None:
    assert rouge_n(candidate, reference) == pytest.approx(rouge, abs=1e-12)
    assert bleu(candidate, [reference]) == pytest.approx(bleu_score, rel=1e-9)


def test_rouge_and_bleu_assertions_score_and_invert_as_promptfoo(tmp_path: Path) -> None:
    # rouge.ts: pass = score >= (threshold ?? 0.75) XOR inverse, score 1 - s under not-;
    # bleu.ts: the same with threshold 0.5
    cand, ref, rouge, bleu_score = SCORES[0]
    found = score(
        tmp_path,
        [
            {"type": "rouge-n", "value": ref},
            {"type": "not-rouge-n", "value": ref},
            {"type": "bleu", "value": ref},
            {"type": "bleu", "value": ref, "threshold": 0.6},
            {"type": "not-bleu", "value": ref, "threshold": 0.6},
        ],
        cand,
    )
    got = [(round(f.score or 0, 12), f.passed) for f in found.findings]
    assert got == [
        (0.9, True), (round(1 - rouge, 12), False), (round(bleu_score, 12), True),
        (round(bleu_score, 12), False), (round(1 - bleu_score, 12), True),
    ]  # fmt: skip
    assert (
        found.findings[0].reason == "ROUGE-N score 0.90 is greater than or equal to threshold 0.75"
    )
    assert found.findings[3].reason == "BLEU score 0.5969 is less than threshold 0.6"


def test_cost_and_latency_compare_with_what_the_target_reported(tmp_path: Path) -> None:
    # cost.ts / latency.ts: value <= threshold; no threshold, or nothing reported, throws
    spent = Output(text="x", cost=0.002, duration_ms=120.0)
    got = pairs_of(
        tmp_path,
        [
            {"type": "cost", "threshold": 0.01},
            {"type": "cost", "threshold": 0.001},
            {"type": "latency", "threshold": 500},
            {"type": "latency", "threshold": 100},
        ],
        spent,
    )
    assert got == [(1.0, True), (0.0, False), (1.0, True), (0.0, False)]
    unpriced = score(tmp_path, [{"type": "cost", "threshold": 1}], "x")
    assert unpriced.findings[0].error == (
        "Cost assertion does not support providers that do not return cost"
    )
    no_limit = score(tmp_path, [{"type": "latency"}], spent)
    assert no_limit.findings[0].error == "Latency assertion must have a threshold in milliseconds"


PROBE = """
const rouge = require('js-rouge');
const {calculateBleuScore} = require('./node_modules/promptfoo/dist/src/assertions/bleu.js');
const pairs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(pairs.map(([c, r]) => [rouge.n(c, r, {}), calculateBleuScore(c, [r])])));
"""

MORE = [
    ("It was the best of times, it was the worst of times.", "It was the best of times."),
    ("The cat sat on the mat; the dog didn't.", "A cat sat on a mat and a dog did not"),
    ("Dr. Smith went to Washington. He arrived at 5 p.m.", "Smith arrived in Washington at 5."),
    ("one two three four five", "one two three four five six seven"),
    ("See the U.S. Army. It is big.", "The U.S. Army is big."),
    ("Mr. Brown (the man) left! Then what? Nothing...", "Mr. Brown left. Nothing then."),
    ("I saw 3.5 cats. Then e.g. dogs", "I saw 3 cats, e.g. two."),
]


@pytest.mark.reference
@pytest.mark.skipif(
    shutil.which("node") is None or not (PROMPTFOO_HOME / "node_modules" / "js-rouge").is_dir(),
    reason="promptfoo's npm install (benchmarks/_model_eval.py) is not present",
)
def test_rouge_and_bleu_agree_with_promptfoo_itself(tmp_path: Path) -> None:
    probe = PROMPTFOO_HOME / f"accord-probe-{tmp_path.name}.js"
    probe.write_text(PROBE)
    try:
        done = subprocess.run(
            ["node", probe.name], input=json.dumps(MORE), cwd=PROMPTFOO_HOME,
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    finally:
        probe.unlink()
    theirs = json.loads(done.stdout)
    ours = [[rouge_n(c, r), bleu(c, [r])] for c, r in MORE]
    for (their_rouge, their_bleu), (our_rouge, our_bleu) in zip(theirs, ours, strict=True):
        assert our_rouge == pytest.approx(their_rouge, abs=1e-9)
        assert our_bleu == pytest.approx(their_bleu, rel=1e-9)
