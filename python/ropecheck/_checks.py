"""Arguments checked before they reach the extension (python/README.md "Errors").

pybind11 refuses a value its C++ parameter cannot hold (an int beyond the parameter's range, None
for a string, a str with a lone surrogate, which has no UTF-8 form) with a TypeError or
RuntimeError whose message lists every overload and dumps the arguments, the whole input array
included. Each option is checked here first and refused with one line naming it.
"""
import numpy as np

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def short(value, limit=60):
    """repr(value), cut to `limit` characters: a message names the value, never dumps it."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def integer(value, name, low, high):
    """value as an int in [low, high]; ValueError naming the option otherwise (a bool, a float, an
    int beyond what the C++ parameter holds)."""
    if isinstance(value, (bool, np.bool_, float)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: expected an integer, got {short(value)}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name}: expected an integer from {low} to {high}, got {value}")
    return value


def optional_integer(value, name, low, high):
    return None if value is None else integer(value, name, low, high)


def number(value, name, low, high, unit=""):
    """value as a float in [low, high] (NaN refused); ValueError naming the option otherwise (a bool,
    a str, None)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number{unit} from {low:g} to {high:g}, got {short(value)}")
    value = float(value)
    if not low <= value <= high:
        raise ValueError(f"{name}: expected a number{unit} from {low:g} to {high:g}, got {value!r}")
    return value


def text(value, name, expected="text"):
    """value as a str that has a UTF-8 form (no lone surrogate); ValueError naming the option otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected {expected}, got {short(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{name}: expected text encodable as UTF-8, got a lone surrogate "
                         f"{value[error.start]!r} at character {error.start}") from None
    return value
