"""Reading the records of files that may be corrupt or hostile (``llmgym view``, ``report`` and
``render``): JSON of bounded nesting, and fields checked against the types the readers use.

:func:`load_json` refuses what would crash a reader later (nesting past :data:`MAX_DEPTH`,
integers past Python's digit limit). :func:`checked` replaces each field of a record that is not
of its declared kind (a non-finite number is of no kind) by the field's default and says which
it replaced; :func:`trajectory_record` does both for a line of a trajectory file.
:func:`finite` makes what is left writable as strict JSON (what a browser parses).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from llmgym.runner.trajectories import SCHEMA
from llmgym.serving.protocol import nested_deeper_than

__all__ = [
    "MAX_DEPTH",
    "Field",
    "checked",
    "count",
    "finite",
    "flag",
    "integer",
    "load_json",
    "number",
    "optional",
    "problem_line",
    "quoted",
    "text",
    "trajectory_record",
]

MAX_DEPTH = 100
"""How deep a record may nest arrays and objects (a trajectory nests five levels)."""
_MAX_COUNT = 2**53
"""The largest count a record may hold (every integer up to it is exact as a float)."""
_MOST_FIELDS_NAMED = 5


def load_json(data: str | bytes) -> Any:
    """The value of the JSON text ``data`` (``NaN``, ``Infinity`` and ``1e400`` are read as
    non-finite floats, as :func:`json.loads` reads them).

    Raises:
        ValueError: Not JSON (or not UTF-8), nested more than :data:`MAX_DEPTH` deep, or an
            integer longer than Python converts; the message says which.
    """
    too_deep = f"nested more than {MAX_DEPTH} levels deep"
    if nested_deeper_than(data, MAX_DEPTH):
        raise ValueError(too_deep)
    try:
        return json.loads(data)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg}, column {error.colno})") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except ValueError:  # the one other: Python's limit on an integer's digits
        raise ValueError(f"an integer of more than {sys.get_int_max_str_digits()} digits") from None
    except RecursionError:  # invalid JSON the nesting scan cannot measure exactly
        raise ValueError(too_deep) from None


def finite(value: Any) -> Any:
    """``value`` (of :func:`load_json`) with every non-finite float replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        return [finite(item) for item in value]
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------- field kinds
def text(value: Any) -> bool:
    return isinstance(value, str)


def flag(value: Any) -> bool:
    return isinstance(value, bool)


def count(value: Any) -> TypeGuard[int]:
    """A whole number from 0 to 2**53."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT


def number(value: Any) -> bool:
    """A finite number."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and abs(value) <= sys.float_info.max
    )


def integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def optional(kind: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or kind(value)


def _object(value: Any) -> bool:
    return isinstance(value, dict)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


@dataclass(frozen=True)
class Field:
    """What a field must be (``kind`` says whether a value is one), its value when it is absent
    or not that (a callable, as ``list``, makes a fresh one), and how a warning describes what
    it must be."""

    kind: Callable[[Any], bool]
    default: Any
    expected: str


def checked(
    record: Mapping[str, Any], fields: Mapping[str, Field], problems: list[str], where: str = ""
) -> dict[str, Any]:
    """``record`` with each of ``fields`` that is absent or not of its kind set to its default
    (other keys kept as they are); ``problems`` gets ``"'FIELD' is not EXPECTED"`` for each
    field replaced that was present (``where`` before the field's name)."""
    result = dict(record)
    for name, rule in fields.items():
        value = record.get(name)
        if name in record and rule.kind(value):
            continue
        if name in record:
            problems.append(f"'{where}{name}' is not {rule.expected}")
        result[name] = rule.default() if callable(rule.default) else rule.default
    return result


def quoted(name: str, most: int = 40) -> str:
    """A name read from a file, for a warning: quoted, escaped to one line, at most ``most``
    characters of it."""
    return repr(name if len(name) <= most else name[: most - 1] + "…")


def problem_line(problems: list[str]) -> str:
    """One line for the problems of one record: the first few, and how many more."""
    shown = "; ".join(problems[:_MOST_FIELDS_NAMED])
    more = len(problems) - _MOST_FIELDS_NAMED
    return f"{shown} (and {more} more fields)" if more > 0 else shown


# ---------------------------------------------------------------------- trajectories
_FRAMES = {
    "file": Field(text, "", "text"),
    "offset": Field(count, 0, "a whole number"),
    "length": Field(count, 0, "a whole number"),
    "count": Field(count, 0, "a whole number"),
}
_TURN = {
    "observation": Field(text, "", "text"),
    "reply": Field(text, "", "text"),
    "thought": Field(text, "", "text"),
    "action": Field(optional(text), None, "text or null"),
    "reward": Field(number, 0.0, "a finite number"),
    "invalid_action": Field(flag, False, "true or false"),
    "format_error": Field(flag, False, "true or false"),
}
_TRAJECTORY = {
    "env_id": Field(text, "", "text"),
    "task_id": Field(text, "", "text"),
    "split": Field(text, "", "text"),
    "seed": Field(optional(integer), None, "a whole number or null"),
    "config": Field(_object, dict, "an object"),
    "instruction": Field(text, "", "text"),
    "system_prompt": Field(text, "", "text"),
    "agent": Field(text, "", "text"),
    "turns": Field(lambda value: isinstance(value, list), list, "a list of turns"),
    "final_observation": Field(text, "", "text"),
    "success": Field(flag, False, "true or false"),
    "total_reward": Field(number, 0.0, "a finite number"),
    "terminated": Field(flag, False, "true or false"),
    "truncated": Field(flag, False, "true or false"),
    "usage": Field(_object, dict, "an object"),
    "skills": Field(_texts, list, "a list of texts"),
    "error": Field(optional(text), None, "text or null"),
    "metadata": Field(_object, dict, "an object"),
}


def trajectory_record(line: str | bytes) -> tuple[dict[str, Any], list[str]]:
    """A line of a trajectory file as a record whose every field of the schema has the type
    the schema gives it, and the problems of the fields that did not (each replaced by its
    default: no text, no turns, ``false``, ``0.0``, ``null``).

    Raises:
        ValueError: The line holds no :data:`~llmgym.runner.trajectories.SCHEMA` record.
    """
    data = load_json(line)
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not a trajectory record")
    if data.get("schema") != SCHEMA:
        raise ValueError(f"not an {SCHEMA} record")
    problems: list[str] = []
    record = checked(data, _TRAJECTORY, problems)
    turns = []
    for index, turn in enumerate(record["turns"]):
        if isinstance(turn, dict):
            turns.append(checked(turn, _TURN, problems, f"turns[{index}]."))
        else:
            problems.append(f"'turns[{index}]' is not a turn object")
    record["turns"] = turns
    if "frames" in record["metadata"]:
        frames = record["metadata"]["frames"]
        frame_problems: list[str] = []
        if isinstance(frames, dict):
            checked(frames, _FRAMES, frame_problems, "metadata.frames.")
        if frame_problems or not isinstance(frames, dict):
            problems.append(
                "'metadata.frames' is not a place in a frames file (file, offset, length, count)"
            )
            record["metadata"] = {k: v for k, v in record["metadata"].items() if k != "frames"}
    return record, problems
