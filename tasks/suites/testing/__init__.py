"""`accord test`: Oxy's tests as container nodes of the minimal sub-DAG of the task under
test, prepared, run, scored and gated."""
