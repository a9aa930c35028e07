"""promptfoo configs (`promptfooconfig.yaml`, release 0.118) as accord suites: `load`
builds the suite, `outputs` writes promptfoo's `-o` files (docs/promptfoo.md)."""

from .config import PromptfooSuite, load

__all__ = ["PromptfooSuite", "load"]
