"""How AgentV's example eval files load in accord (docs/agentv.md, AgentV 4 section):
the files under `examples/` the `agentv4` front-end claims; those that load unchanged
(the repository as it is, with an empty config.yml at its root marking the project and
the Azure variables its catalog reads set to placeholders); those that load once every
catalog label is an AgentV `openai` entry; and the problems of the rest, file by file.

    python benchmarks/agentv_examples.py --git-dir PATH/TO/agentv/.git

Nothing runs and no model is called: each file is loaded as `accord validate` loads it.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

import yaml

PLACEHOLDERS = {
    "AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com",
    "AZURE_OPENAI_API_KEY": "placeholder",
    "AZURE_DEPLOYMENT_NAME": "deployment",
    "MAPPED_KEY": "placeholder",
}


def problems(path: Path) -> list[str]:
    from accord.engine.errors import AccordError
    from accord.tasks.suites.core import frontend as frontends

    try:
        frontends.load(path, frontends.Request())
    except AccordError as exc:
        issues = getattr(exc, "issues", None) or []
        return [f"{i.line}: {i.message}" for i in issues] or [exc.message]
    return []


def map_catalogs(root: Path) -> None:
    """Every label of every catalog as an AgentV openai entry."""
    for catalog in root.rglob(".agentv/providers.yaml"):
        data = yaml.safe_load(catalog.read_text())
        entries = data.get("providers") if isinstance(data, dict) else data
        labels = [e.get("label") or e.get("id") for e in entries or [] if isinstance(e, dict)]
        catalog.write_text("".join(
            f"- id: openai\n  label: {label}\n  base_url: http://127.0.0.1:9/v1\n"
            "  api_key: '{{ env.MAPPED_KEY }}'\n  model: m\n"
            for label in labels if label
        ))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True, help="AgentV's repository (its .git)")
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args()
    os.environ.update(PLACEHOLDERS)
    from accord.tasks.suites.core import frontend as frontends

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        tree = subprocess.run(["git", f"--git-dir={args.git_dir}", "archive", args.commit],
                              capture_output=True, check=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
            tar.extractall(root, filter="data")
        (root / "config.yml").write_text("")
        files = [
            p for p in sorted((root / "examples").rglob("*"))
            if p.suffix in (".yaml", ".yml") and p.is_file()
            and getattr(frontends.claimant(frontends.Source(p)), "name", None) == "agentv4"
        ]  # fmt: skip
        unchanged = [p for p in files if not problems(p)]
        map_catalogs(root)
        rest = {p: found for p in files if (found := problems(p))}
        print(f"claimed {len(files)}, load unchanged {len(unchanged)}, "
              f"with providers mapped {len(files) - len(rest)}")  # fmt: skip
        for path, found in rest.items():
            print(path.relative_to(root))
            for line in found:
                print("   ", line.replace(folder, "")[:200])


if __name__ == "__main__":
    main()
