"""The report formats of `accord test`: a registry of writers (`formats`) and their renderers."""
