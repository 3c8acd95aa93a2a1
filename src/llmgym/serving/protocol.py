"""llmgym's serving protocol: the wire format and the errors both sides of a connection share.

On the wire (:func:`dumps`, :func:`loads`) numpy arrays are exact: an array is written as
``{"__ndarray__": <base64 of its bytes, C order, little-endian>, "dtype": "uint8", "shape":
[64, 64, 3]}`` and read back as an array of the same dtype, shape and bytes. Spaces travel as
the descriptions of :func:`space_to_dict`. :class:`HostingError` and its subclasses carry the
status and the machine-readable code that each transport reports.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, get_args

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from llmgym.core.config import EnvConfig
from llmgym.errors import (
    ConfigError,
    DataError,
    EnvRaisedError,
    InvalidRequestError,
    NestingError,
)

__all__ = [
    "ARRAY_DTYPES",
    "ARRAY_KEY",
    "PROTOCOL_VERSION",
    "SERVABLE_SPACES",
    "ArrayDType",
    "config_error",
    "data_error",
    "decode_array",
    "dumps",
    "encode_array",
    "loads",
    "nested_deeper_than",
    "raised_message",
    "space_from_dict",
    "space_to_dict",
]

PROTOCOL_VERSION = 1
"""Bumped when requests or responses change incompatibly; clients check it."""


def raised_message(error: BaseException) -> str:
    """What a client is told of an exception its environment raised: the type and message, of
    an ``OSError`` only the reason (its file names are the server's)."""
    if isinstance(error, DataError):  # names the server's files
        return data_error(error).message
    reason = error.strerror if isinstance(error, OSError) and error.strerror else error
    return f"the environment raised {type(error).__name__}: {reason}"


def data_error(error: DataError) -> EnvRaisedError:
    """What a client is told when the server's original dataset cannot serve a request (a
    500): not the message, which names the server's files; the server's log has it."""
    return EnvRaisedError(
        "the server's original dataset cannot serve this: a file it needs is missing or "
        "unreadable (its operator can run `llmgym data check`; the server's log names the file)",
        details=f"{type(error).__name__}: {error}",
    )


def config_error(error: ConfigError) -> InvalidRequestError:
    """A bad config value, with the field and the message without the field's prefix."""
    message = str(error).removeprefix(f"{error.field}: ")
    return InvalidRequestError(message, field=error.field, code="invalid_config")


ArrayDType = Literal[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
ARRAY_DTYPES: tuple[str, ...] = get_args(ArrayDType)
"""The dtypes of arrays that travel exactly; arrays of other dtypes become JSON lists."""

ARRAY_KEY: Final = "__ndarray__"
"""The key that marks an encoded array in JSON (its value: the base64 of the array's bytes)."""


def encode_array(array: np.ndarray) -> dict[str, Any]:
    """``{"__ndarray__": base64, "dtype": name, "shape": [...]}``: the array's bytes in C order
    and little-endian (a third more than the raw bytes; a 64x64 RGB frame is 16 KB)."""
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return {
        ARRAY_KEY: base64.b64encode(data).decode("ascii"),
        "dtype": array.dtype.name,
        "shape": list(array.shape),
    }


def decode_array(data: Mapping[str, Any]) -> np.ndarray:
    """The array :func:`encode_array` wrote (writable, native byte order).

    Raises:
        ValueError: ``data`` is not an encoded array, names a dtype not in
            :data:`ARRAY_DTYPES`, or its bytes do not fill its shape.
    """
    if set(data) != {ARRAY_KEY, "dtype", "shape"}:
        raise ValueError(
            f"an encoded array has exactly the keys {ARRAY_KEY}, dtype and shape; "
            f"got {', '.join(sorted(map(str, data)))}"
        )
    name, shape = data["dtype"], data["shape"]
    if name not in ARRAY_DTYPES:
        raise ValueError(f"array dtype {name!r} is not allowed; allowed: {', '.join(ARRAY_DTYPES)}")
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ValueError(f"array shape must be a list of non-negative integers, got {shape!r}")
    try:
        raw = base64.b64decode(data[ARRAY_KEY], validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise ValueError(f"{ARRAY_KEY} must be base64 text") from None
    dtype = np.dtype(name).newbyteorder("<")
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise ValueError(
            f"an array of shape {shape} and dtype {name} has {math.prod(shape) * dtype.itemsize} "
            f"bytes, but {ARRAY_KEY} holds {len(raw)}"
        )
    try:
        array = np.frombuffer(bytearray(raw), dtype).reshape(shape)
    except ValueError as error:  # more dimensions than numpy allows
        raise ValueError(f"array shape {shape}: {error}") from None
    return array.astype(dtype.newbyteorder("="), copy=False)


def _decode_object(data: dict[str, Any]) -> Any:
    return decode_array(data) if ARRAY_KEY in data else data


def _encode_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return encode_array(value) if value.dtype.name in ARRAY_DTYPES else value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, EnvConfig):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return repr(value)


def dumps(payload: Any) -> bytes:
    """Compact JSON of ``payload``: numpy arrays become encoded arrays (exact, see
    :func:`encode_array`), numpy scalars plain numbers, sets and configs plain JSON; anything else
    that JSON cannot hold becomes its ``repr``. Non-ASCII text is escaped, so lone surrogates in
    hostile text survive the round trip."""
    return json.dumps(payload, separators=(",", ":"), default=_encode_default).encode()


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NESTING = np.zeros(256, np.int8)
_NESTING[[ord("["), ord("{")]] = 1
_NESTING[[ord("]"), ord("}")]] = -1


def nested_deeper_than(data: str | bytes, limit: int) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects more than ``limit`` deep. A scan
    of the text, without parsing it: linear in its length, and exact for valid JSON."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    steps = _NESTING[np.frombuffer(_JSON_STRING.sub(b"", raw), np.uint8)]
    return bool(steps.size) and int(np.cumsum(steps, dtype=np.int32).max()) > limit


def loads(data: str | bytes, *, max_depth: int | None = None) -> Any:
    """The value of JSON written by :func:`dumps`, with encoded arrays decoded. Bytes must be
    UTF-8 (as JSON on the wire must be).

    Raises:
        json.JSONDecodeError: Not JSON.
        UnicodeDecodeError: Bytes that are not UTF-8.
        NestingError: Nested more than ``max_depth`` deep (or deeper than Python can parse).
        ValueError: A malformed encoded array (see :func:`decode_array`).
    """
    if max_depth is not None and nested_deeper_than(data, max_depth):
        raise NestingError(f"JSON nested more than {max_depth} deep")
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    try:
        return json.loads(text, object_hook=_decode_object, parse_int=_parse_int)
    except RecursionError:
        raise NestingError("JSON nested too deep to parse") from None


_MAX_INT_DIGITS = 4300
"""Python's own limit on converting a decimal string to ``int``."""


def _parse_int(text: str) -> int:
    """A JSON integer; a longer one than Python converts is a decode error, not a crash."""
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise json.JSONDecodeError(
            f"an integer of {len(text)} digits (at most {_MAX_INT_DIGITS})", text, 0
        )
    return int(text)


# ------------------------------------------------------------------------------ spaces
SERVABLE_SPACES = ("Text", "Discrete", "Box", "MultiDiscrete", "MultiBinary")
"""The gymnasium spaces an environment may have to be served."""


def _bound(bounds: np.ndarray) -> Any:
    """A Box bound: one number when every element has the same finite bound, else the array."""
    if bounds.size:
        first = bounds.flat[0]
        if np.isfinite(first) and np.all(bounds == first):
            return first.item()
    return bounds


def _array(value: Any, dtype: Any = None) -> np.ndarray:
    """An array from a description: encoded (as :func:`dumps` wrote it), decoded, or a list."""
    if isinstance(value, Mapping):
        value = decode_array(value)
    return np.asarray(value, dtype=dtype)


def space_to_dict(space: gym.Space) -> dict[str, Any]:
    """A description of ``space`` (one of :data:`SERVABLE_SPACES`): JSON values and numpy
    arrays, which :func:`dumps` writes exactly. ``type`` names the space; the other keys are
    its constructor's arguments.

    Raises:
        InvalidRequestError: Another kind of space.
    """
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "min_length": space.min_length,
            "max_length": space.max_length,
            "charset": "".join(sorted(space.character_set)),
        }
    if isinstance(space, spaces.Discrete):
        return {
            "type": "Discrete",
            "n": int(space.n),
            "start": int(space.start),
            "dtype": space.dtype.name,
        }
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": space.dtype.name,
            "low": _bound(space.low),
            "high": _bound(space.high),
        }
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec, "start": space.start}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": space.n if isinstance(space.n, int) else list(space.n)}
    raise InvalidRequestError(
        f"{type(space).__name__} spaces cannot be served; servable: {', '.join(SERVABLE_SPACES)}"
    )


_MAX_SPACE_ELEMENTS = 2**26
"""The most elements a space described by a server may have (a Box's or MultiBinary's shape, a
MultiDiscrete's ``nvec``) and the longest text a Text space may allow: :func:`space_from_dict`
refuses more before it allocates anything (a 100000x100000 Box would take 9 GiB)."""

_MAX_DIMENSIONS = 32
"""The most axes numpy (before 2.0) gives an array."""

_INTEGER_DTYPES = tuple(name for name in ARRAY_DTYPES if "int" in name)


def _count(value: Any, field: str, *, minimum: int | None = 0) -> int:
    """``value`` as a Python integer of at least ``minimum`` (JSON numbers and numpy integers;
    not bools, not floats)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{field} must be an integer, got {value!r:.100}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{field} must be at least {minimum}, got {value}")
    return int(value)


def _shape(value: Any, field: str, *, minimum: int) -> tuple[int, ...]:
    """A space's shape: a list of integers of at least ``minimum``, with at most
    2**26 elements in all."""
    if not isinstance(value, (list, tuple)) or len(value) > _MAX_DIMENSIONS:
        raise ValueError(f"{field} must be a list of at most {_MAX_DIMENSIONS} integers")
    shape = tuple(_count(n, f"{field}[{i}]", minimum=minimum) for i, n in enumerate(value))
    _check_elements(math.prod(shape), f"{field} {list(shape)}")
    return shape


def _check_elements(elements: int, what: str, unit: str = "elements") -> None:
    if elements > _MAX_SPACE_ELEMENTS:
        raise ValueError(
            f"{what}: {elements} {unit}, more than the {_MAX_SPACE_ELEMENTS} (2**26) a client "
            "accepts"
        )


def _dtype(value: Any, field: str, allowed: Sequence[str]) -> np.dtype:
    if value not in allowed:
        raise ValueError(f"{field} {value!r:.100} is not allowed; allowed: {', '.join(allowed)}")
    return np.dtype(value)


def _integer_array(value: Any, field: str) -> np.ndarray:
    """A MultiDiscrete vector: an encoded array or nested lists of integers, at most
    2**26 of them."""
    if isinstance(value, Mapping) and isinstance(value.get("shape"), list):
        _shape(value["shape"], f"{field}.shape", minimum=0)  # before decoding
    try:
        array = _array(value)
    except (ValueError, TypeError, RecursionError) as error:
        raise ValueError(f"{field}: {error}") from None
    _check_elements(array.size, f"{field} of shape {list(array.shape)}")
    if array.dtype.name not in _INTEGER_DTYPES:
        raise ValueError(f"{field} must hold integers, got {array.dtype.name} values")
    return array


def _box_bound(value: Any, field: str, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A Box bound: one number, or an array of exactly the Box's shape."""
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return value
    try:
        array = _array(value, dtype)
    except (ValueError, TypeError, OverflowError, RecursionError) as error:
        raise ValueError(f"{field}: {error}") from None
    if array.shape != shape:
        raise ValueError(f"{field} has shape {list(array.shape)}, the Box {list(shape)}")
    return array


def _text_space(data: Mapping[str, Any]) -> gym.Space:
    from llmgym.core.env import text_space
    from llmgym.core.text import CHARSET

    max_length = _count(data["max_length"], "Text.max_length")
    _check_elements(max_length, "Text.max_length", "characters")
    min_length = _count(data["min_length"], "Text.min_length")
    if min_length > max_length:
        raise ValueError(f"Text.min_length {min_length} is over Text.max_length {max_length}")
    charset = data["charset"]
    if not isinstance(charset, str) or not charset:
        raise ValueError("Text.charset must be a non-empty string")
    if set(charset) == set(CHARSET):  # llmgym's own class, so that the space prints the same
        return text_space(max_length, min_length)
    return spaces.Text(max_length=max_length, min_length=min_length, charset=charset)


def _discrete_space(data: Mapping[str, Any]) -> gym.Space:
    dtype = _dtype(data["dtype"], "Discrete.dtype", _INTEGER_DTYPES)
    n = _count(data["n"], "Discrete.n", minimum=1)
    start = _count(data["start"], "Discrete.start", minimum=None)
    limits = np.iinfo(dtype)
    if start < limits.min or start + n - 1 > limits.max:
        raise ValueError(
            f"Discrete.start {start} and n {n} leave the range of {dtype.name} "
            f"[{limits.min}, {limits.max}]"
        )
    if dtype.name == "int64":  # older gymnasium releases take no dtype (and always use int64)
        return spaces.Discrete(n, start=start)
    return spaces.Discrete(n, start=start, dtype=dtype.name)


def _box_space(data: Mapping[str, Any]) -> gym.Space:
    dtype = _dtype(data["dtype"], "Box.dtype", [n for n in ARRAY_DTYPES if "complex" not in n])
    shape = _shape(data["shape"], "Box.shape", minimum=0)
    low = _box_bound(data["low"], "Box.low", shape, dtype)
    high = _box_bound(data["high"], "Box.high", shape, dtype)
    return spaces.Box(low, high, shape=shape, dtype=dtype)


def _multi_discrete_space(data: Mapping[str, Any]) -> gym.Space:
    nvec = _integer_array(data["nvec"], "MultiDiscrete.nvec")
    start = _integer_array(data["start"], "MultiDiscrete.start")
    if start.shape != nvec.shape:
        raise ValueError(
            f"MultiDiscrete.start has shape {list(start.shape)}, nvec {list(nvec.shape)}"
        )
    if not (nvec > 0).all():
        raise ValueError("MultiDiscrete.nvec must be positive")
    return spaces.MultiDiscrete(nvec, dtype=nvec.dtype, start=start)


def _multi_binary_space(data: Mapping[str, Any]) -> gym.Space:
    n = data["n"]
    if isinstance(n, (list, tuple)):
        return spaces.MultiBinary(_shape(n, "MultiBinary.n", minimum=1))
    count = _count(n, "MultiBinary.n", minimum=1)
    _check_elements(count, "MultiBinary.n")
    return spaces.MultiBinary(count)


_SPACE_BUILDERS = {
    "Text": _text_space,
    "Discrete": _discrete_space,
    "Box": _box_space,
    "MultiDiscrete": _multi_discrete_space,
    "MultiBinary": _multi_binary_space,
}


def space_from_dict(data: Mapping[str, Any]) -> gym.Space:
    """The space described by :func:`space_to_dict` (llmgym's own Text space class when the
    charset is llmgym's, so it prints the same). A description comes from a server, which the
    client does not trust: every field is checked before anything is allocated.

    Raises:
        ValueError: An unknown ``type`` (a server newer than this client), or a malformed or
            absurd description: a missing field or one of the wrong type, a negative size, a
            space of more than 2**26 elements. The message names the field.
    """
    kind = data.get("type") if isinstance(data, Mapping) else None
    if not isinstance(kind, str):
        raise ValueError(f"a space description is a JSON object with a type, got {data!r:.100}")
    if kind not in _SPACE_BUILDERS:
        raise ValueError(
            f"the server describes a {kind:.100} space, which this client cannot build: "
            "install the same llmgym version on both sides"
        )
    try:
        return _SPACE_BUILDERS[kind](data)
    except KeyError as missing:
        raise ValueError(f"the {kind} space's description has no {missing} field") from None
    except (TypeError, AssertionError, OverflowError) as error:  # gymnasium's own checks
        raise ValueError(f"the {kind} space's description is malformed: {error}") from None
