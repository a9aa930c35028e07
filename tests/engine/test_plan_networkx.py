"""A compiled plan exports to networkx with the same edges the scheduler uses."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from accord.engine.compile import compile_workflow


def test_to_networkx_has_the_template_and_depends_on_edges(tmp_path: Path) -> None:
    path = tmp_path / "w.workflow.yml"
    path.write_text(
        "tasks:\n"
        "  - {name: a, type: formatter, template: x}\n"
        "  - {name: b, type: formatter, template: '{{ a }}'}\n"
        "  - {name: c, type: formatter, template: y, depends_on: [b]}\n"
        "  - {name: d, type: formatter, template: '{{ a }} {{ c }}'}\n"
    )
    _project, plan = compile_workflow(path)
    graph = plan.to_networkx()
    assert set(graph.edges) == {("a", "b"), ("b", "c"), ("a", "d"), ("c", "d")}
    assert nx.is_directed_acyclic_graph(graph)
    assert nx.dag_longest_path_length(graph) + 1 == plan.by_name["a"].priority == 4
    assert graph.nodes["d"]["task"].deps == ("a", "c")
