"""The base of llmgym's wrappers: recorded in ``env.spec``, typed access to the environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from llmgym.core.env import TextEnvLike, unwrapped_text_env

__all__ = ["TextEnvWrapper"]


class TextEnvWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A ``gymnasium.Wrapper`` for llmgym environments.

    * Its constructor's arguments are recorded as gymnasium's own wrappers record theirs
      (:class:`gymnasium.utils.RecordConstructorArgs`), so ``env.spec.additional_wrappers``
      lists the wrapper with them and ``gymnasium.make(env.spec)`` builds the same stack.
    * :attr:`text_env` is the llmgym environment inside, typed (:class:`~llmgym.core.TextEnvLike`).

    A subclass passes the arguments it was given, by name, to this constructor::

        class Hint(TextEnvWrapper):
            def __init__(self, env: gym.Env, every: int = 1) -> None:
                super().__init__(env, every=every)

    Args:
        env: The environment to wrap.
        **arguments: The subclass's constructor arguments except ``env`` (deep-copied).
    """

    def __init__(self, env: gym.Env, **arguments: Any) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, **arguments)
        gym.Wrapper.__init__(self, env)

    @property
    def text_env(self) -> TextEnvLike:
        """The llmgym environment inside all wrappers (``env.unwrapped``): a
        :class:`~llmgym.TextEnv`, or a remote one's proxy.

        Raises:
            TypeError: The wrapped environment is not an llmgym environment.
        """
        return unwrapped_text_env(self.env, type(self).__name__)
