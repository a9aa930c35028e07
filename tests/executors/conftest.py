"""A local Ray cluster (2 CPUs) for the executor tests, started once per test process.

Where Ray cannot start (not installed, or the machine refuses) the tests are skipped with the
reason, except in CI (CI=true), where that is a failure."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    in_ci = os.environ.get("CI", "").lower() in ("1", "true")
    try:
        import ray
    except ImportError:
        if in_ci:
            pytest.fail("Ray is not installed: CI installs accord[ray]")
        pytest.skip("Ray is not installed (pip install 'accord[ray]')")
    if not ray.is_initialized():
        try:
            ray.init(num_cpus=2, namespace="accord", include_dashboard=False,
                     log_to_driver=False, configure_logging=False)  # fmt: skip
        except Exception as exc:
            if in_ci:
                raise
            pytest.skip(f"a local Ray cluster cannot start here: {exc}")
    yield ray
    from accord.engine.ray_executor import RayExecutor

    RayExecutor._connected = None
    ray.shutdown()
