"""Regular expressions as cel-go runs them: Go's regexp package, RE2 syntax and semantics.

Patterns run on RE2 itself (the `google-re2` binding of the C++ library Go's package re-implements): leftmost-
first matching, linear time, Perl classes as ASCII, no backreferences or lookaround. A pattern RE2 refuses gets
Go's error text ("error parsing regexp: <problem>: `<part>`"); `\\C` (any byte), which C++ RE2 accepts and Go
does not, is refused as Go refuses it. FindAllString follows Go: an empty match right after a match is skipped.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

from schedcheck.reference.util.cel.values import Err

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
# C++ RE2's problem names -> Go regexp/syntax's (ErrorCode strings)
_CODES = {"missing )": "missing closing )", "missing ]": "missing closing ]",
          "bad repetition operator": "invalid nested repetition operator",
          "invalid repetition size": "invalid repeat count",
          "no argument for repetition operator": "missing argument to repetition operator",
          "invalid perl operator": "invalid or unsupported Perl syntax",
          "invalid named capture group": "invalid named capture", "bad named capture group": "invalid named capture",
          "pattern too large - compile failed": "expression too large", "excessive depth": "expression nests too deeply"}
_ANY_BYTE = re.compile(r"(?<!\\)(?:\\\\)*\\C")


class Compiled:
    def __init__(self, regexp: Any) -> None:
        self.regexp = regexp

    def search(self, text: str) -> bool:
        return self.regexp.search(text) is not None

    def find(self, text: str) -> str:
        match = self.regexp.search(text)
        return match.group(0) if match is not None else ""

    def find_all(self, text: str, limit: int) -> list[str]:
        """Go's FindAllString(text, limit)."""
        if limit < 0:
            limit = len(text) + 1
        out: list[str] = []
        pos, previous_end = 0, -1
        while len(out) < limit and pos <= len(text):
            match = self.regexp.search(text, pos)
            if match is None:
                break
            start, end = match.span()
            accept = True
            if end == pos:  # an empty match: skipped right after a match; the next search starts one on
                if start == previous_end:
                    accept = False
                pos += 1
            else:
                pos = end
            previous_end = end
            if accept:
                out.append(match.group(0))
        return out


def _go_error(message: str, pattern: str) -> str:
    problem, _, part = message.partition(": ")
    if problem == "trailing \\":
        return "error parsing regexp: trailing backslash at end of expression: ``"
    problem = _CODES.get(problem, problem)
    if problem in ("missing closing )", "missing closing ]") and part:
        part = pattern if problem == "missing closing )" else part
    return f"error parsing regexp: {problem}: `{part}`"


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> Compiled | Err:
    """regexp.Compile: the compiled pattern, or Go's error."""
    found = _ANY_BYTE.search(pattern)
    if found is not None:
        return Err("error parsing regexp: invalid escape sequence: `\\C`")
    try:
        return Compiled(re2.compile(pattern, _OPTIONS))
    except re2.error as err:
        text = err.args[0]
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        return Err(_go_error(text, pattern))
