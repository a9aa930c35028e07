"""A Python provider standing in for the model of the suites here (text-checks,
required-checks, suite-wide-rubrics, weighted-rubrics, judge-prompts, the conversations):
a fixed answer for each of their prompts (chosen by a phrase of it), some wrong on purpose
(an equals that does not hold, a JSON answer that is not JSON, a reply without the weekday
asked for, and answers opening with "Hi there", which the differential test's judge fails)."""

from __future__ import annotations

from typing import Any

ANSWERS = {
    # text-checks
    "new team member": "Welcome aboard, glad to have you.",
    "reach the help desk": "Call 555-0142 any weekday.",
    "sides has a hexagon": "A hexagon has 6 sides",
    "ticket 8812": "Ticket #8812 is closed.",
    "build state as JSON": '{"state": "passing", "duration": 42}',
    "items list of three": '{"items": ["apple", "pear", "plum"]}',
    "done field set to": "done: true",
    # required-checks
    "bug report": "Thanks for the report, we will look into it.",
    "region eu-west": '{"region": "eu-west", "replicas": 3}',
    "Name one weekday": "Hi there, the office is open most days.",
    "3 times 3": "9",
    # suite-wide-rubrics
    "Good morning!": "Good morning! What can I do for you?",
    "forgot my password": "Use the reset link on the sign-in page to get a new password.",
    "ALERT": "Understood, this is urgent. Which region is failing?",
    # weighted-rubrics
    "hash table": "A hash table maps keys to buckets by their hash, for fast lookups.",
    "gradient descent": "It moves parameters against the gradient to reduce a loss.",
    "binary search": "It halves a sorted range until the target is found.",
    # judge-prompts
    "three primary colors": "Red, blue and yellow.",
    "capital of France": "Paris.",
    "capital of Italy": "Hi there! It is Rome.",
    # tutoring-conversations
    "What is the discount": "25% of 40 is 0.25 x 40 = 10 euros.",
    "What do I pay then": "40 - 10 = 30 euros.",
    "Which price did I start from": "You started from 40 euros.",
    "runs through Vienna": "The Danube.",
    "Into which sea": "Hi there! It flows into the Black Sea.",
    "What is 7 - 2": "5.",
    "Square that": "5 x 5 = 25.",
    "counts the lines": "wc -l notes.txt",
    "skip blank lines": "grep -c . notes.txt",
    "board game for four": "Try Carcassonne.",
    "cooperative games": "Hi there, try Pandemic.",
    # conversation-failures and conversation-expected
    "12% of 50": "0.12 x 50 = 6.",
    "Now triple that": "3 x 6 = 18.",
    "Which numbers did I start": "You started with 12% and 50.",
    "What is 6 + 3": "9",
    "Halve that": "9 / 2 = 4.5.",
    "status set to": '{"status": "ok", "code": 200}',
}


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    for phrase, answer in ANSWERS.items():
        if phrase in prompt:
            return {"output": answer}
    return {"error": f"no answer for: {prompt[:200]}"}
