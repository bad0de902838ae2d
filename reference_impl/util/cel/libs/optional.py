"""cel-go's optional types library (OptionalTypes, at its latest version in Kubernetes' environment): optional.of,
ofNonZeroValue, none, value, hasValue; `or` and `orValue` are evaluated lazily by the interpreter (their right
side only when the left one is none), as cel-go's decorator does.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import NONE, Err, Optional, is_zero

overload("optional_of")(lambda value: Optional(True, value))
overload("optional_ofNonZeroValue")(lambda value: NONE if is_zero(value) else Optional(True, value))
overload("optional_none", varargs=True)(lambda: NONE)
overload("optional_hasValue")(lambda opt: opt.present)


@overload("optional_value")
def value(opt: Optional) -> Any:
    return opt.value if opt.present else Err("optional.none() dereference")
