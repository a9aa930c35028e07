"""A script grader: reads AgentV's grader payload on stdin and scores the first Python code
block of the answer by four checks, a quarter each: a return annotation, a docstring, a
raised exception and a doctest."""

import json
import re
import sys

CHECKS = {
    "annotates its return value": lambda code: re.search(r"\)\s*->", code) is not None,
    "has a docstring": lambda code: '"""' in code,
    "raises an exception": lambda code: re.search(r"\braise \w+", code) is not None,
    "shows a doctest": lambda code: ">>>" in code,
}


def main() -> None:
    answer = json.load(sys.stdin).get("output") or ""
    block = re.search(r"```(?:python)?\n(.*?)```", answer, re.DOTALL)
    code = block.group(1) if block else answer
    results = [{"text": text, "passed": check(code)} for text, check in CHECKS.items()]
    score = sum(r["passed"] for r in results) / len(results)
    print(json.dumps({"score": score, "assertions": results}))


if __name__ == "__main__":
    main()
