"""`accord test` and `accord eval`: their options, outputs and exit codes."""
