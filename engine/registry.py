"""Every closed set of accord has one registry: task types, evaluators, databases, report
formats, export formats, and the sections plugins add to workflow and agent files (the
registries of what the engine runs and reads are in `kinds`). A member
registers itself with a decorator (or a call) in its own module, so adding one touches one file.

A duplicate name is an error; a missing name is an error that lists the known ones; tests can
register members for the length of a block (`restored`).

The engine never imports the `accord.tasks` package by name in its code: the built-in members
are loaded from it as a plugin, and third-party ones through the `accord.plugins` entry point
group, once, on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from .errors import AccordError, ConfigError, did_you_mean

T = TypeVar("T")


class RegistryError(AccordError):
    """A plugin registered a name twice (a bug in the plugin, not in the user's files)."""


def unknown_member(kind: str, name: str, members: list[str]) -> str:
    """The message for a name nobody registered: the closest one, and every known one."""
    known = ", ".join(sorted(members)) or "none"
    return f"unknown {kind} '{name}'{did_you_mean(str(name), members)} (known: {known})"


class Registry(Generic[T]):
    """Named members of one kind (`kind` names it in messages: "evaluator", "database")."""

    def __init__(self, kind: str, *, plugins: bool = True, members: str | None = None) -> None:
        self.kind = kind
        self._members: dict[str, T] = {}
        self._plugins = plugins
        # the module whose import registers the built-in members, imported when the
        # registry is first read rather than with `accord.tasks`: a run that needs none of
        # them (a workflow of formatters) does not pay for their import
        self._members_module = members

    def add(self, name: str, member: T) -> T:
        """Register `member` as `name`; a name taken already is an error."""
        if name in self._members:
            raise RegistryError(f"{self.kind} '{name}' is registered twice")
        self._members[name] = member
        return member

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`."""

        def decorate(member: T) -> T:
            return self.add(name, member)

        return decorate

    def _loaded(self) -> dict[str, T]:
        if self._plugins:
            load_plugins()
        if self._members_module is not None:
            module, self._members_module = self._members_module, None
            importlib.import_module(module)
        return self._members

    def get(self, name: str) -> T:
        """The member `name`; an unknown name lists the known ones."""
        members = self._loaded()
        if name not in members:
            raise ConfigError(self.unknown(name))
        return members[name]

    def unknown(self, name: str) -> str:
        """The message for a name nobody registered: the closest one, and every known one."""
        return unknown_member(self.kind, name, list(self._loaded()))

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaded()))

    def names(self) -> list[str]:
        """Known names, in registration order."""
        return list(self._loaded())

    def items(self) -> list[tuple[str, T]]:
        return list(self._loaded().items())

    @contextmanager
    def restored(self) -> Iterator[Registry[T]]:
        """For tests: members added inside the block are forgotten when it ends (members that
        modules loaded meanwhile, such as the test runner's task types, included)."""
        saved = dict(self._loaded())
        try:
            yield self
        finally:
            self._members = saved


class Namespace(Generic[T]):
    """The members of one family in a shared registry, read and written by their own names,
    each stored as `family/name` (Inspect's namespaced registry: `accord/contains` and
    `promptfoo/contains` are two checks of one registry).

    `members`: the module whose import registers the family's members, imported on first
    read. `lazy`: a member declared as `module:attribute` and imported when first asked for
    (a member that costs an import to build is not built for a run that does not use it)."""

    def __init__(
        self,
        registry: Registry[Any],
        family: str,
        kind: str,
        *,
        plugins: bool = True,
        members: str | None = None,
        lazy: Mapping[str, str] | None = None,
    ) -> None:
        self.registry = registry
        self.family = family
        self.kind = kind
        self._prefix = f"{family}/"
        self._plugins = plugins
        self._members_module = members
        self._lazy = dict(lazy or {})

    def key(self, name: str) -> str:
        """The member's name in the shared registry."""
        return self._prefix + name

    def add(self, name: str, member: T) -> T:
        self.registry.add(self.key(name), member)
        return member

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(member: T) -> T:
            return self.add(name, member)

        return decorate

    def _ready(self, name: str | None = None) -> dict[str, T]:
        """The shared registry's members, with this family's loaded: its plugins, its members
        module, and the lazy member `name` (None: every lazy one)."""
        if self._plugins:
            load_plugins()
        if self._members_module is not None:
            module, self._members_module = self._members_module, None
            importlib.import_module(module)
        for lazy in [name] if name is not None else list(self._lazy):
            path = self._lazy.pop(lazy, None)
            if path is not None:
                module, _, attribute = path.partition(":")
                member = getattr(importlib.import_module(module), attribute)
                self.registry.add(self.key(lazy), member)
        return self.registry._loaded()

    def _own(self) -> dict[str, T]:
        """Every member of the family, by its own name."""
        size = len(self._prefix)
        members = self._ready()
        return {key[size:]: value for key, value in members.items() if key.startswith(self._prefix)}

    def get(self, name: str) -> T:
        member = self._ready(name).get(self.key(name))
        if member is None:
            raise ConfigError(self.unknown(name))
        return member

    def unknown(self, name: str) -> str:
        return unknown_member(self.kind, name, list(self._own()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.key(name) in self._ready(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._own()))

    def names(self) -> list[str]:
        return list(self._own())

    def items(self) -> list[tuple[str, T]]:
        return list(self._own().items())

    @contextmanager
    def restored(self) -> Iterator[Namespace[T]]:
        """For tests: members added inside the block are forgotten when it ends."""
        lazy = dict(self._lazy)
        with self.registry.restored():
            try:
                yield self
            finally:
                self._lazy = lazy


_loaded = False


BUILTIN_PLUGIN = "accord.tasks"


def load_plugins() -> None:
    """Import the built-in members (`accord.tasks`) and every other `accord.plugins` entry
    point, once."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    importlib.import_module(BUILTIN_PLUGIN)
    from importlib.metadata import entry_points  # pydantic imports it anyway

    for entry in entry_points(group="accord.plugins"):
        if entry.value != BUILTIN_PLUGIN:
            entry.load()
