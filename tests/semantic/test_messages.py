"""One message per cause, saying where accord looked: a topic file that does not load is
named once, with its own problem at its line, however many queries use it; a view missing
from a project without config.yml says which folder was searched and where views are."""

from __future__ import annotations

from pathlib import Path

from tests.semantic.harness import accord, project

QUERY = "  - name: q{n}\n    type: semantic_query\n    topic: shop\n    measures: [sales.revenue]\n"


def test_a_broken_topic_is_one_message_at_its_own_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    topic = root / "semantics" / "shop.topic.yml"
    topic.write_text("name: shop\nviews: [sales]\nbase: sales\n")
    path = root / "q.workflow.yml"
    path.write_text("tasks:\n" + "".join(QUERY.format(n=n) for n in range(11)))
    run = accord("validate", path)
    assert run.exit_code == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(
        f"error: {path}:4:12 tasks[0].topic: topic 'shop' does not load: {topic}:3:1 base: "
    )
    assert lines[0].endswith("(also for lines 8, 12, 16, 20, 24, 28, 32, 36, 40, 44)")
    assert lines[0].count(str(root)) == 2  # the workflow and the topic file, nothing else


def test_an_unknown_topic_says_where_accord_looked(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = root / "q.workflow.yml"
    path.write_text("tasks:\n" + QUERY.format(n=1).replace("topic: shop", "topic: shops"))
    run = accord("validate", path)
    assert run.exit_code == 2
    assert run.stderr == (
        f"error: {path}:4:12 tasks[0].topic: unknown topic 'shops': no .topic.yml under "
        f"{root} names it (topics: shop)\n"
    )


def test_without_config_the_error_names_the_folder_searched_and_where_views_are(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    (root / "config.yml").unlink()
    topics = root / "topics"
    topics.mkdir()
    topic = topics / "shop.topic.yml"
    (root / "semantics" / "shop.topic.yml").rename(topic)
    run = accord("validate", topic)
    assert run.exit_code == 2
    lines = run.stderr.splitlines()
    assert lines[0] == "error: 3 problems found:"
    assert lines[2:] == [
        f"{topic}:2:16 views[1]: unknown view 'stores': no .view.yml under {topics} names it "
        "(views: none)",
        f"{topic}:2:24 views[2]: unknown view 'regions': no .view.yml under {topics} names it "
        "(views: none)",
    ]
    assert lines[1] == (
        f"{topic}:2:9 views[0]: unknown view 'sales': no .view.yml under {topics} names "
        f"it (views: none); without a config.yml the project root is {topics}, and {root} "
        f"holds semantics/regions.view.yml, semantics/sales.view.yml, "
        f"semantics/stores.view.yml: put a config.yml in {root}"
    )
