"""Scenario suites (seed 003): YAML scenarios with macros, model matrices and agent classes."""
