"""Conversation tests (seed 004): scripted turns played against an agent and checked turn by
turn, on the evaluation core; `accord.pytest_plugin` runs them as pytest tests."""
