"""What AgentV's judges of both formats share: the rubric answer's schema text (the older
format's agent judge and AgentV 4's rubric grader ask for the same JSON) and `substitute`,
the `{{ name }}` filling of a judge's prompt template. The judge prompts themselves are each
format's own text (v2/judges.py, v2/agent_judge.py, v4/checks/judge.py)."""

from __future__ import annotations

import re

# the JSON a rubric judge answers with (AgentV 4: buildRubricOutputSchema)
RUBRIC_FORMAT = """You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}"""

# the names a template may fill: the older format's (an identifier), AgentV 4's
# (substituteVariables: letters, digits and `_`, a digit first too)
V2_NAMES = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
V4_NAMES = re.compile(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}")


def substitute(template: str, values: dict[str, str], names: re.Pattern[str] = V2_NAMES) -> str:
    """`{{ name }}` of a known name replaced (once: a value's own braces stay); names it
    does not know are left as written. `names`: the format's pattern of a name."""
    return names.sub(lambda m: values.get(m.group(1), m.group(0)), template)
