"""`schedcheck conform`: implemented in schedcheck.conform.command; named here as the command table expects
(add_arguments, main). Remove this module once schedcheck.conform.command names its parts so itself."""

from __future__ import annotations

from schedcheck.conform.command import DESCRIPTION, EPILOG, main
from schedcheck.conform.command import configure as add_arguments

__all__ = ["DESCRIPTION", "EPILOG", "add_arguments", "main"]
