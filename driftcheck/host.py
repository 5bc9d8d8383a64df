"""Kept for code written against the old module path: the hosts now live in `driftcheck.hosts`."""

from __future__ import annotations

from driftcheck.errors import CommandTimeout, FactsScriptError, TargetPythonError
from driftcheck.hosts.base import Capabilities, CommandResult, Host, facts_script, parse_script_output
from driftcheck.hosts.local import LocalHost

__all__ = ["Capabilities", "CommandResult", "CommandTimeout", "FactsScriptError", "Host", "LocalHost",
           "TargetPythonError", "facts_script", "parse_script_output"]
