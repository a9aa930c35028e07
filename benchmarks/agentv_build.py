"""Build AgentV's command line from its source, for the differential tests
(tests/promptfoo/test_agentv4_differential.py), into ~/.cache/accord-bench/agentv-src.

The AgentV 4 format accord follows (promptfoo-style `prompts`/`providers`/`tests`) is AgentV's
source at commit 58f316ca2 (its packages at 5.3.1-next.1); npm's newest release of `agentv`,
4.42.4, predates it and reads only the older format. AgentV's own build needs bun; node 20 and
esbuild bundle the same TypeScript: the CLI's entry with AgentV's packages compiled in, its
npm dependencies installed beside it.

    python benchmarks/agentv_build.py [--git-dir PATH_TO_AN_AGENTV_CLONE]

Without --git-dir it clones https://github.com/EntityProcess/agentv (network). Never run by
the test suite itself.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

COMMIT = "58f316ca24e3abcdd253efafbc240882f39dc5b0"
HOME = Path.home() / ".cache" / "accord-bench" / "agentv-src"
PARTS = ["apps/cli", "packages/core", "packages/sdk", "package.json", "tsconfig.base.json"]
# the workspace root's own dependencies the CLI imports, and the bundler
EXTRA = {"async-mutex": "^0.5.0", "p-limit": "^6.1.0", "esbuild": "^0.24.0"}
BUNDLE = """
import * as esbuild from 'esbuild';
const root = process.cwd();
const src = (path) => root + '/packages/' + path;
await esbuild.build({
  entryPoints: ['apps/cli/src/cli.ts'], bundle: true, platform: 'node', format: 'esm',
  target: 'node20', outfile: 'dist/cli.js', packages: 'external', logLevel: 'error',
  alias: {
    '@agentv/core/evaluation/validation': src('core/src/evaluation/validation/index.ts'),
    '@agentv/core/script-grader': src('core/src/script-grader.ts'),
    '@agentv/core': src('core/src/index.ts'),
    '@agentv/sdk': src('sdk/src/index.ts'),
  },
  banner: {
    js: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);",
  },
});
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, help="an AgentV clone's git directory")
    args = parser.parse_args()
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        print("needs node and npm", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        git_dir = args.git_dir
        if git_dir is None:
            subprocess.run(["git", "clone", "--bare", "https://github.com/EntityProcess/agentv",
                            f"{scratch}/agentv.git"], check=True)  # fmt: skip
            git_dir = Path(scratch) / "agentv.git"
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", COMMIT, *PARTS],
                                 check=True, capture_output=True).stdout  # fmt: skip
    shutil.rmtree(HOME, ignore_errors=True)
    HOME.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(HOME, filter="data")
    dependencies: dict[str, str] = {}
    for part in ("packages/core", "packages/sdk", "apps/cli"):
        found = json.loads((HOME / part / "package.json").read_text()).get("dependencies", {})
        dependencies |= {k: v for k, v in found.items() if not v.startswith("workspace:")}
    (HOME / "package.json").write_text(json.dumps({
        "name": "agentv-from-source", "private": True, "type": "module",
        "dependencies": {**dependencies, **EXTRA},
    }, indent=1))  # fmt: skip
    subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HOME,
                   check=True)  # fmt: skip
    (HOME / "bundle.mjs").write_text(BUNDLE)
    subprocess.run([node, "bundle.mjs"], cwd=HOME, check=True)
    version = subprocess.run([node, "dist/cli.js", "--version"], cwd=HOME, check=True,
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
    print(f"AgentV {version} ({COMMIT[:9]}) built: {HOME / 'dist' / 'cli.js'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
