"""Types of the environment contract: the type variables of observations and actions, and the
``info`` keys every llmgym environment returns (TypedDicts).

This module does not use ``from __future__ import annotations``: with string annotations,
``ResetInfo.__required_keys__`` would count the ``NotRequired`` keys as required.
"""

from typing import Generic

from typing_extensions import NotRequired, TypedDict, TypeVar

__all__ = ["ActT", "ObsT", "ResetInfo", "StepInfo"]

ObsT = TypeVar("ObsT", default=str)
"""An environment's observation type: text, unless it is a pixel variant (an RGB array)."""
ActT = TypeVar("ActT", default=str)
"""An environment's action type: text, unless it is a pixel variant (an action index)."""


class StepInfo(TypedDict, Generic[ActT]):
    """The ``info`` keys every llmgym environment's :meth:`TextEnv.step` returns; environments
    add their own (e.g. ``feedback``), and wrappers theirs.

    ``step`` is typed ``dict[str, Any]``, as gymnasium's ``Env.step`` is (a TypedDict is no
    subtype of it); :class:`TextEnv` builds its ``info`` as this type, and
    :func:`llmgym.testing.check_api` checks every environment against it.

    Attributes:
        success: Whether the task is solved (it stays solved for the rest of the episode).
        invalid_action: Whether the action was not understood or not applicable: the state is
            unchanged and the observation says why and what would be valid.
        admissible_actions: The actions valid now, where the environment can list them (not
            after the episode's last step).
    """

    success: bool
    invalid_action: bool
    admissible_actions: NotRequired[list[ActT]]


class ResetInfo(StepInfo[ActT]):
    """The ``info`` keys every llmgym environment's :meth:`TextEnv.reset` returns: those of
    :class:`StepInfo` (``success`` and ``invalid_action`` are ``False``) and the task's.

    Attributes:
        instruction: The task, in words.
        task_id: The task's id, ``"<split>/<number>"``; ``reset(options={"task_id": ...})``
            plays it again.
        split: ``"train"`` or ``"eval"``.
    """

    instruction: str
    task_id: str
    split: str
