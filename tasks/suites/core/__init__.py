"""The evaluation core: prepared suites -> test nodes on the scheduler -> scores -> gate."""
