"""A script grader that asks models through AgentV's provider proxy (no key of its own):
the grader model (the proxy's default provider) lists the claims of the answer, then the
catalog provider named by the grader's `checker` setting says, one request per claim in one
batch, whether the test's passages (its metadata) hold that claim. The score is the
share of claims found.

Before that it checks the proxy itself, and scores 0 naming what failed: a wrong token is
refused (401), a provider label the catalog lacks is refused (400, not counted), `/info`
tells the budget, and the only proxy variables it was given are these two. The claims'
question ends with what `/info` lists, the count of expected messages it was given and the
criteria, so that the model sees any difference there. It writes the proxy's address
(never its token) to `proxy-addresses.txt` in its folder, for a test to check that nothing
listens there after the run. A batch past the budget (429) scores 0."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

URL_VAR, TOKEN_VAR = "AGENTV_PROVIDER_PROXY_URL", "AGENTV_PROVIDER_PROXY_TOKEN"
CLAIMS_SYSTEM = (
    "You split an answer into its factual claims, one sentence each. "
    'Reply with JSON: {"claims": ["..."]}'
)


def call(url: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def verdict(score: float, reason: str, checks: list[dict[str, Any]] | None = None) -> None:
    print(json.dumps({"score": score, "reason": reason, "checks": checks or []}))
    raise SystemExit(0)


def main() -> None:
    case = json.load(sys.stdin)
    url, token = os.environ.get(URL_VAR), os.environ.get(TOKEN_VAR)
    if not url or not token:
        verdict(0.0, "no provider proxy")
    with (Path.cwd() / "proxy-addresses.txt").open("a") as seen:
        seen.write(url + "\n")
    given = sorted(k for k in os.environ if "PROXY" in k)
    if given != sorted([URL_VAR, TOKEN_VAR]):
        verdict(0.0, f"unexpected variables: {given}")
    if not url.startswith("http://127.0.0.1:"):
        verdict(0.0, f"the proxy is not on loopback: {url}")
    if call(url, "/info", token + "x")[0] != 401:
        verdict(0.0, "a wrong token was not refused")
    status, refused = call(url, "/invoke", token, {"question": "hi", "provider": "nobody"})
    if status != 400 or not refused["error"].startswith("Unknown provider 'nobody'."):
        verdict(0.0, f"an unknown provider was not refused: {status} {refused}")
    status, info = call(url, "/info", token)
    if status != 200 or (info["maxCalls"], info["callCount"]) != (4, 0):
        verdict(0.0, f"/info: {status} {info}")

    question = next((m["content"] for m in reversed(case["input"]) if m.get("role") == "user"), "")
    status, listed = call(url, "/invoke", token, {
        "question": f"Question: {question}\n\nAnswer: {case['output']}\n\n"
                    f"Criteria: {case.get('criteria') or '(none)'}\n"
                    f"Expected messages: {len(case.get('expected_output') or [])}\n"
                    f"Providers: {info['providerLabel']} of "
                    f"{', '.join(info['availableProviderLabels'])}",
        "systemPrompt": CLAIMS_SYSTEM,
    })  # fmt: skip
    if status != 200 or listed["rawText"] != listed["output"][-1]["content"]:
        verdict(0.0, f"claims: {status} {listed}")
    claims = json.loads(listed["rawText"])["claims"]
    passages = (case.get("metadata") or {}).get("passages") or []
    context = "\n".join(f"[{i + 1}] {p}" for i, p in enumerate(passages))
    status, found = call(url, "/invokeBatch", token, {"requests": [
        {"question": f"Passages:\n{context}\n\nClaim: {claim}\n\nIs the claim stated in the "
                     "passages? Reply yes or no.",
         "provider": case["config"]["checker"]}
        for claim in claims
    ]})  # fmt: skip
    if status == 429:
        verdict(0.0, f"over budget: {found['error']}")
    if status != 200:
        verdict(0.0, f"batch: {status} {found}")
    checks = [
        {"text": claim, "pass": reply["rawText"].strip().lower().startswith("yes"),
         "reason": reply["rawText"]}
        for claim, reply in zip(claims, found["responses"], strict=True)
    ]  # fmt: skip
    held = sum(c["pass"] for c in checks)
    verdict(held / len(checks) if checks else 0.0, f"{held} of {len(checks)} claims found", checks)


if __name__ == "__main__":
    main()
