"""promptfoo configs (`promptfooconfig.yaml`, release 0.118) as accord suites: `load`
builds the suite, `outputs` writes promptfoo's `-o` files (docs/promptfoo.md); a file of
promptfoo's form written for another tool is read with that tool's `Dialect` (form.py)."""

from .config import PromptfooSuite, load
from .form import Dialect

__all__ = ["Dialect", "PromptfooSuite", "load"]
