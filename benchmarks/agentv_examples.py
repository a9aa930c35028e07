"""How AgentV's example eval files validate in accord (docs/agentv.md, AgentV 4 section):
AgentV's repository as it is at a commit (`git archive`: no file added, no config.yml),
the variables its catalogs read set to placeholders; the files under `examples/` the
`agentv4` front-end claims, those that validate, and the reasons of the rest, at their lines.

    python benchmarks/agentv_examples.py --git-dir PATH/TO/agentv/.git [--commit C]

A checkout of the repository has its `.git` at the top, where AgentV finds its repoRoot
(findRepoRoot) and accord the top of an AgentV project (agentv/common/project.py): `git
archive` leaves it out, so an empty `.git` folder stands for it (`--no-git` measures without
it; `--config-yml` adds an empty config.yml at the top, the measure before AgentV's own
project root was followed). Nothing runs and no model is called: each file is loaded as
`accord validate` loads it.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ENV_REF = re.compile(r"\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
TARGET = "every example that needs no coding agent validates; each other named with its reason"


def problems(path: Path) -> list[str]:
    from accord.engine.errors import AccordError
    from accord.tasks.suites.core import frontend as frontends

    try:
        frontends.load(path, frontends.Request())
    except AccordError as exc:
        issues = getattr(exc, "issues", None) or []
        return [f"{i.line}: {i.message}" for i in issues] or [exc.message]
    return []


def catalog_variables(root: Path) -> dict[str, str]:
    """Every variable a catalog (`.agentv/providers.yaml`, `providers.yaml`) reads, set to a
    placeholder (a URL where the name says one)."""
    names: set[str] = set()
    for catalog in [*root.rglob("providers.yaml"), *root.rglob("providers.yml")]:
        names.update(ENV_REF.findall(catalog.read_text(errors="replace")))
    return {
        name: "https://example.openai.azure.com" if re.search("ENDPOINT|URL|BASE", name)
        else "placeholder"
        for name in sorted(names)
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--git-dir", required=True, help="AgentV's repository (its .git)")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--no-git", action="store_true", help="no .git folder at the top")
    parser.add_argument("--config-yml", action="store_true", help="an empty config.yml at the top")
    args = parser.parse_args()
    from accord.tasks.suites.core import frontend as frontends

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        tree = subprocess.run(["git", f"--git-dir={args.git_dir}", "archive", args.commit],
                              capture_output=True, check=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
            tar.extractall(root, filter="data")
        if not args.no_git:
            (root / ".git").mkdir()
        if args.config_yml:
            (root / "config.yml").write_text("")
        os.environ.update(catalog_variables(root))
        os.environ["AGENTV_HOME"] = str(root / ".agentv-home")  # not the user's ~/.agentv
        files = [
            p for p in sorted((root / "examples").rglob("*"))
            if p.suffix in (".yaml", ".yml") and p.is_file()
            and getattr(frontends.claimant(frontends.Source(p)), "name", None) == "agentv4"
        ]  # fmt: skip
        rest = {p: found for p in files if (found := problems(p))}
        setup = "no .git" if args.no_git else "an empty .git folder"
        setup += ", config.yml" if args.config_yml else ", no config.yml"
        print(f"AgentV {args.commit} as it is ({setup}); target: {TARGET}")
        print(f"claimed {len(files)}, validate {len(files) - len(rest)}, refused {len(rest)}")
        for path, found in rest.items():
            print(path.relative_to(root))
            for line in found:
                print("   ", line.replace(folder, "")[:240])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
