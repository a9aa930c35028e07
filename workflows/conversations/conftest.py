"""A scripted judge for the example, served on a local port for the length of the test run:
an OpenAI-compatible `/chat/completions` that answers `Answer: yes` or `Answer: no` by a small
table of rules. Delete this file and name a real judge in config.yml to judge for real."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # weather_agent, wherever pytest is run from

# (statement, words the text must hold) and (expected, actual) pairs the judge accepts
STATEMENTS = {
    "mentions current weather conditions": ("°F",),
    "asks for a city": ("city",),
}
SAME_MEANING = {
    ("It is 54 degrees and raining in Paris.", "It is 54°F and rain in Paris."),
}


def verdict(question: str) -> bool:
    statement = re.search(r"Statement: (.*)\n\nText: (.*)\n\nAnswer yes", question, re.S)
    if statement:
        words = STATEMENTS.get(statement.group(1), ())
        return bool(words) and all(w in statement.group(2) for w in words)
    meaning = re.search(r"Expected: (.*)\n\nActual: (.*)\n\nParaphrases", question, re.S)
    return bool(meaning) and (meaning.group(1), meaning.group(2)) in SAME_MEANING


class Judge(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question = body["messages"][-1]["content"]
        answer = "yes" if verdict(question) else "no"
        message = {"role": "assistant", "content": f"By the example's rules.\nAnswer: {answer}"}
        reply = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ["ACCORD_EXAMPLE_JUDGE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
