"""A Ray address that takes no connection is a clear error at once (Ray itself waits
minutes), and an address of the wrong shape says what it expects."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from accord.cli import main


def test_an_unreachable_or_malformed_address_exits_2(tmp_path: Path) -> None:
    (tmp_path / "w.workflow.yml").write_text(
        "tasks:\n  - {name: a, type: formatter, template: hi}\n"
    )
    runner = CliRunner()
    for address, said in (("127.0.0.1:1", "cannot reach the Ray cluster at 127.0.0.1:1"),
                          ("nowhere", "expected host:port, ray://host:port or auto")):  # fmt: skip
        result = runner.invoke(main, ["run", str(tmp_path / "w.workflow.yml"), "--executor",
                                      "ray", "--ray-address", address])  # fmt: skip
        assert result.exit_code == 2, result.output
        assert said in result.output or "the Ray executor needs Ray" in result.output
        assert "Traceback" not in result.output
