"""Toolkits: groups of tools declared apart from any environment.

A :class:`Toolkit` is a small class whose tools are methods declared with :func:`tool`; it is
made over the episode's state (``Toolkit(state)``, kept as ``self.state``) and its tools work
on that state. The parameters of a tool, their JSON types and whether they are required come
from the Python signature; its description, its parameters' descriptions and its result from
its docstring (Google style ``Args:`` and ``Returns:`` sections). Tools that differ only in data
(Weather's queries) are rows of a :class:`ToolTable` that call one method with fixed arguments.

A toolkit lists its tools (:attr:`Toolkit.tools`, :meth:`Toolkit.schemas`) and runs them by
name (:meth:`Toolkit.call`), so anything that speaks JSON (an environment, a tool server) can
offer them. A tool that refuses its arguments raises :class:`ToolError`.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from llmgym.envs.tools.calls import ToolCall
from llmgym.envs.tools.schema import ArgType, Param, Tool
from llmgym.errors import ToolError

__all__ = [
    "CurrentDate",
    "ToolCatalogue",
    "ToolError",
    "ToolTable",
    "Toolkit",
    "tool",
]


_Method = TypeVar("_Method", bound=Callable[..., Any])
_TOOL_MARK = "__llmgym_tool__"
StateT = TypeVar("StateT")


def tool(method: _Method) -> _Method:
    """Declare a method of a :class:`Toolkit` as a tool. Its docstring describes it: a first
    paragraph (the description), ``Args:`` with one ``name: description`` line per parameter
    (longer descriptions continue on deeper-indented lines; a parameter described in the
    toolkit's :attr:`~Toolkit.parameter_docs` may be left out) and ``Returns:`` (what the
    agent gets back). Types and defaults come from the signature."""
    setattr(method, _TOOL_MARK, True)
    return method


@dataclass(frozen=True)
class ToolTable:
    """Tools declared as data: tools that differ only in what they read call one method of the
    toolkit with fixed arguments. As a class attribute of a :class:`Toolkit`, its tools are
    listed where the attribute stands."""

    tools: tuple[Tool, ...]

    @classmethod
    def from_data(cls, data: Mapping[str, Any], method: str) -> ToolTable:
        """The tools of ``data``: ``parameters`` maps each parameter name to its JSON ``type``
        and ``description``; each row of ``tools`` gives a ``name``, ``description``,
        ``returns``, its (required) ``parameters`` by name and the ``presets`` passed to
        ``method`` with the call's arguments."""
        docs = data["parameters"]
        return cls(
            tuple(
                Tool(
                    name=row["name"],
                    description=row["description"],
                    params=tuple(
                        Param(name, ArgType(docs[name]["type"]), docs[name]["description"], True)
                        for name in row["parameters"]
                    ),
                    returns=row["returns"],
                    method=method,
                    presets=tuple(row["presets"].items()),
                )
                for row in data["tools"]
            )
        )


class Toolkit(Generic[StateT]):
    """A group of tools over one piece of episode state.

    Subclass it, declare tools as methods with :func:`tool` (or rows of a :class:`ToolTable`)
    and read or change ``self.state`` in them. Tools are listed in the order they are declared,
    inherited ones first. Declarations are checked when the class is made: every parameter
    needs a description.
    """

    parameter_docs: ClassVar[Mapping[str, str]] = {}
    """Descriptions of parameters that several tools share (their docstrings leave them out)."""
    tools: ClassVar[dict[str, Tool]] = {}
    """The toolkit's tools by name, in declaration order."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, Tool] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                if getattr(member, _TOOL_MARK, False) is True:
                    found[name] = _tool_of(member, cls.parameter_docs)
                if isinstance(member, ToolTable):
                    found.update((t.name, t) for t in member.tools)
        cls.tools = found

    def __init__(self, state: StateT) -> None:
        self.state = state

    @classmethod
    def schemas(cls) -> list[dict[str, Any]]:
        """Every tool in OpenAI's function-calling format."""
        return [declared.schema() for declared in cls.tools.values()]

    def call(self, name: str, arguments: Any) -> Any:
        """Call the tool ``name`` with ``arguments`` (a JSON object, checked and coerced as
        :meth:`~llmgym.envs.tools.schema.Tool.bind` does) and return its result (JSON data or
        text). :class:`ToolError` says what is wrong: an unknown tool, bad arguments (one line
        per problem) or the tool's own refusal."""
        declared = self.tools.get(name)
        if declared is None:
            raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(self.tools)}")
        bound, problems = declared.bind(
            dict(arguments) if isinstance(arguments, Mapping) else arguments
        )
        if problems:
            raise ToolError("\n".join(problems))
        return self.run(declared, bound)

    def run(self, declared: Tool, arguments: Mapping[str, Any]) -> Any:
        """Run ``declared`` (one of :attr:`tools`) with arguments :meth:`Tool.bind` accepted."""
        method: Callable[..., Any] = getattr(self, declared.method)
        return method(**dict(declared.presets), **arguments)


def _tool_of(method: Callable[..., Any], shared_docs: Mapping[str, str]) -> Tool:
    """The :class:`Tool` of a method declared with :func:`tool`; ``shared_docs`` describe the
    parameters its docstring leaves out."""
    name = method.__name__
    description, own_docs, returns = _read_docstring(inspect.getdoc(method) or "")
    param_docs = {**shared_docs, **own_docs}
    hints = typing.get_type_hints(method)
    params = []
    for param_name, parameter in inspect.signature(method).parameters.items():
        if param_name == "self":
            continue
        if param_name not in param_docs:
            raise TypeError(f"tool {name}: parameter {param_name!r} has no description")
        arg_type, optional = ArgType.from_annotation(hints[param_name])
        has_default = parameter.default is not inspect.Parameter.empty
        params.append(
            Param(
                name=param_name,
                type=arg_type,
                description=param_docs[param_name],
                required=not has_default and not optional,
                default=parameter.default if has_default else None,
            )
        )
    unknown = set(own_docs) - {p.name for p in params}
    if unknown:
        raise TypeError(f"tool {name}: descriptions for unknown parameters {unknown}")
    return Tool(name, description, tuple(params), returns, name)


def _read_docstring(doc: str) -> tuple[str, dict[str, str], str]:
    """``(description, {parameter: description}, returns)`` of a tool's (cleaned) docstring;
    wrapped lines are joined with single spaces."""
    sections: dict[str, list[str]] = {"": [], "Returns:": []}
    param_docs: dict[str, list[str]] = {}
    section = ""
    for line in doc.splitlines():
        text = line.strip()
        if text in ("Args:", "Returns:"):
            section = text
        elif text and section == "Args:":
            if line.startswith(" " * 8) and param_docs:  # a wrapped description
                list(param_docs.values())[-1].append(text)
            else:
                param_name, _, param_doc = text.partition(": ")
                param_docs[param_name] = [param_doc]
        elif text:
            sections[section].append(text)
    docs = {param_name: " ".join(lines) for param_name, lines in param_docs.items()}
    return " ".join(sections[""]), docs, " ".join(sections["Returns:"])


class Dated(Protocol):
    """Episode state with a current date (the user's today)."""

    @property
    def today(self) -> date: ...


class CurrentDate(Toolkit[Dated]):
    """The tool that tells the user's current date (``state.today``)."""

    date_call: ClassVar[ToolCall] = ToolCall("get_user_current_date")
    """The plan step that asks for the date (before a question relative to today)."""

    @tool
    def get_user_current_date(self) -> str:
        """Get the user's current date.

        Returns:
            The current date as YYYY-MM-DD.
        """
        return self.state.today.isoformat()


class ToolCatalogue(Toolkit[Sequence[str]]):
    """The tool that lists the names of every tool of an environment (its state)."""

    @tool
    def check_valid_actions(self) -> list[str]:
        """List the names of the tools you can call.

        Returns:
            An array of tool names.
        """
        return list(self.state)
