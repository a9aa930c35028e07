"""Run comparison: `accord runs compare`, the `--baseline` regression gate of `accord eval`
and `accord test`, and `accord view` over the run store."""
