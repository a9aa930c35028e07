"""The evaluation core: a suite -> target, check and verdict nodes on the engine's runner ->
verdicts, repeats reduced -> gate."""
