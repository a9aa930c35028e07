"""The suite's test cases: a rider's question, the articles that answer it, and the answer a
help-desk expert would give (the reference for context recall)."""

from __future__ import annotations

from dataclasses import dataclass, field

from accord import BaseTestCase, md5


@dataclass
class TestCase(BaseTestCase):
    question: str
    expected_article_ids: list[str] = field(default_factory=list)
    reference_answer: str = ""

    def hash(self) -> str:
        """Identifies the case across runs: the question does."""
        return md5(self.question)


def gen_test_cases() -> list[TestCase]:
    return [
        TestCase(
            question="How do I patch a flat tyre?",
            expected_article_ids=["flat-tyre"],
            reference_answer=(
                "Take the wheel off and find the puncture. Patch the inner tube. "
                "Pump the tyre to the pressure printed on its sidewall."
            ),
        ),
        TestCase(
            question="What pressure should my road tyres be at?",
            expected_article_ids=["tyre-pressure"],
            reference_answer="Road tyres run at 80 to 100 psi.",
        ),
        TestCase(
            question="My brakes squeak and the chain skips gears",
            expected_article_ids=["squeaky-brakes", "gear-shifting"],
            reference_answer=(
                "Clean the rims and replace worn pads to stop the squeak. "
                "Turn the barrel adjuster until the chain stops skipping."
            ),
        ),
        TestCase(
            question="Do you sell helmets?",
            expected_article_ids=[],
            reference_answer="The shop repairs bikes and sells no helmets.",
        ),
    ]
