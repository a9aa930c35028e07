"""A program answering for the `cli` provider: the question from --prompt (checked against
--prompt-file), the answer written to --output, as text or as AgentV's JSON reply."""

import argparse
import json
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--prompt")
parser.add_argument("--prompt-file")
parser.add_argument("--output")
parser.add_argument("--healthcheck", action="store_true")
args = parser.parse_args()
if args.healthcheck:
    print("healthy")
    sys.exit(0)
question = args.prompt
if Path(args.prompt_file).read_text(encoding="utf-8") != question:
    answer = "the prompt file differs from the prompt"
elif "boiling point" in question:
    answer = "Water boils at 100 degrees Celsius at sea level."
elif "which gas" in question:
    answer = json.dumps(
        {
            "output": [
                {"role": "assistant", "content": "Plants take in carbon dioxide."},
            ]
        }
    )
elif "Ravi" in question:
    answer = "Hi there Ravi."
else:
    answer = "no answer"
Path(args.output).write_text(answer, encoding="utf-8")
