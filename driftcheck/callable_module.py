"""Modules that can be called: `driftcheck.snapshot(...)` and `driftcheck.check(...)`.

`driftcheck.snapshot` is also the package of the snapshot document and `driftcheck.check` the module of
the gate's policy, and Python binds a submodule as an attribute of its parent package once anything
imports it. So the harness calls cannot be plain functions of `driftcheck`: the submodule would replace
them. Instead those two modules answer a call by handing it to the function of `driftcheck.api`,
imported only then. Type checkers do not see the call; typed code imports `driftcheck.api` directly.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from typing import Any


class CallableModule(types.ModuleType):
    """A module whose call runs the function its `__call_target__` names (module, attribute)."""

    def _target(self) -> Any:
        module, attribute = self.__dict__["__call_target__"]
        return getattr(importlib.import_module(module), attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        # So help() and inspect.signature() show the call's real parameters.
        return inspect.signature(self._target())


def make_callable(module_name: str, target_module: str, target_attribute: str) -> None:
    """Make the imported module `module_name` callable as `target_module.target_attribute`."""
    module = sys.modules[module_name]
    module.__dict__["__call_target__"] = (target_module, target_attribute)
    module.__class__ = CallableModule
