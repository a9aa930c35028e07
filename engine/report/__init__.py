"""Renderers of runs and plans: pretty (rich), json, graph (text/dot/mermaid), schema."""
