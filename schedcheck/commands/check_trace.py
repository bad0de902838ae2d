"""`schedcheck check-trace`: implemented in schedcheck.conform.check_trace_command; named here as the command
table expects (add_arguments, main). Remove this module once that module names its parts so itself."""

from __future__ import annotations

from schedcheck.conform.check_trace_command import DESCRIPTION, EPILOG, main
from schedcheck.conform.check_trace_command import configure as add_arguments

__all__ = ["DESCRIPTION", "EPILOG", "add_arguments", "main"]
