"""BabyAI: MiniGrid's BabyAI levels as text, with path-planned high-level actions."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np

from llmgym.core import (
    EnvConfig,
    Task,
    TaskIdRange,
    TaskRng,
    TextEnv,
    Transition,
    knob,
    normalize_command,
    optional_import,
    split_of,
)
from llmgym.core.text import join_names

if TYPE_CHECKING:
    from minigrid.minigrid_env import MiniGridEnv

minigrid = optional_import("minigrid", extra="babyai")
_bot_module = optional_import("minigrid.utils.baby_ai_bot", extra="babyai")

__all__ = ["LEVELS", "BabyAIConfig", "BabyAIEnv"]

LEVELS: tuple[str, ...] = (
    "GoToRedBallGrey", "GoToRedBall", "GoToRedBallNoDists", "GoToObj", "GoToObjS4", "GoToObjS6",
    "GoToLocal", "GoTo", "GoToOpen", "GoToObjMaze", "GoToObjMazeOpen", "GoToImpUnlock",
    "GoToSeq", "GoToRedBlueBall", "GoToDoor", "GoToObjDoor", "Open", "OpenRedDoor", "OpenDoor",
    "OpenDoorColor", "OpenDoorLoc", "OpenTwoDoors", "OpenRedBlueDoors", "OpenDoorsOrderN2",
    "OpenDoorsOrderN4", "Pickup", "UnblockPickup", "PickupLoc", "PickupDist", "PickupAbove",
    "PutNextLocal", "PutNextS4N1", "PutNextS5N2", "PutNextS6N3", "PutNextS7N4", "Unlock",
    "UnlockLocal", "UnlockLocalDist", "UnlockPickup", "UnlockPickupDist", "BlockedUnlockPickup",
    "ActionObjDoor", "FindObjS5", "KeyCorridorS3R1", "KeyCorridorS3R2",
    "OneRoomS8", "MoveTwoAcrossS5N2", "Synth", "SynthS5R2", "SynthLoc", "SynthSeq",
    "MiniBossLevel", "BossLevel", "BossLevelNoUnlock",
)  # fmt: skip
"""The BabyAI levels played, easiest first: the 19 levels of the BabyAI paper and the bonus
levels that MiniGrid's BabyAI bot solves. Left out: the PutNext*Carrying levels and KeyInBox,
which the bot cannot solve, and UnlockToUnlock, where its planner loops forever on most seeds."""

_GYM_IDS = {"GoToObjS6": "BabyAI-GoToObjS6-v1"}
TRAIN_SEEDS_PER_LEVEL = 1_000
EVAL_SEEDS_PER_LEVEL = 100
_MAX_ATTEMPTS = 64

_PRIMITIVES = {
    "turn left": 0,
    "turn right": 1,
    "move forward": 2,
    "pick up": 3,
    "drop": 4,
    "toggle": 5,
}
_PRIMITIVE_ALIASES = {
    "left": "turn left",
    "right": "turn right",
    "forward": "move forward",
    "go forward": "move forward",
    "move ahead": "move forward",
    "pickup": "pick up",
    "drop it": "drop",
    "put down": "drop",
}
_ACTION_NAMES = {code: name for name, code in _PRIMITIVES.items()}
_OBJECT_CODES = [4, 5, 6, 7]  # MiniGrid's OBJECT_TO_IDX of door, key, ball, box
_TARGET = (
    r"(?:the )?(?P<color>red|green|blue|purple|yellow|grey|gray) (?P<kind>ball|box|key|door)"
    r"(?: (?P<number>[0-9]{1,2}))?"
)
_HIGH_LEVEL = re.compile(
    r"^(?P<verb>go to|pick up|pickup|open|go through|toggle and go through|drop next to"
    r"|put down next to|put next to|drop it next to)\s+" + _TARGET + "$"
)
_DOOR_WITH_STATE = re.compile(
    r"^(?P<verb>go through|toggle and go through)\s+(?:the )?"
    r"(?P<color>red|green|blue|purple|yellow|grey|gray) (?P<state>open|closed|locked) "
    r"(?P<kind>door)(?: (?P<number>[0-9]{1,2}))?$"
)  # AgentGym's door forms: 'go through red open door 1', 'toggle and go through ...'
_DIRECTIONS = (
    (1, 0),
    (0, 1),
    (-1, 0),
    (0, -1),
)  # MiniGrid's agent_dir 0..3: east, south, west, north
_HELP = (
    "Actions: turn left, turn right, move forward, pick up, drop, toggle, or go to / pick up / "
    "open / go through / drop next to COLOR OBJECT (e.g. 'go to red ball', 'open blue door')."
)


@dataclass(frozen=True)
class BabyAIConfig(EnvConfig):
    """Which BabyAI levels to play."""

    level: str | None = knob(
        None,
        choices=LEVELS,
        doc="Play only this BabyAI level (None: all levels, task ids cycle through them).",
    )
    show_admissible: bool = knob(
        True,
        doc="End each observation with the list of available actions (as AgentGym's wrapper).",
    )
    actions: str = knob(
        "llmgym",
        choices=("llmgym", "agentgym"),
        doc="'agentgym': AgentGym's action forms ('pickup red ball 1', 'go through red open "
        "door 1', 'toggle and go through ...') are listed and the goal starts each observation.",
    )


@dataclass(frozen=True)
class _Seen:
    """An object in the agent's view: its name, grid position and position relative to the
    agent (``ahead`` steps forward, ``right`` steps to the right; negative: behind / left)."""

    name: str
    label: str
    position: tuple[int, int]
    ahead: int
    right: int

    @property
    def distance(self) -> int:
        return abs(self.ahead) + abs(self.right)


class BabyAIEnv(TextEnv[BabyAIConfig]):
    """Follow a BabyAI instruction in a MiniGrid world described in text.

    ## Description
    The BabyAI levels of MiniGrid (Chevalier-Boisvert et al., 2019), played on MiniGrid's own
    engine and described in text after AgentGym's wrapper: the mission (``go to the red ball``,
    ``open the blue door``, ``put the purple key next to the green box``, ``pick up a ball after
    you open a door``, ...), the objects in the agent's 7x7 field of view with their positions
    relative to the agent ("a red ball 2 steps ahead and 1 step to your right"), what the
    agent faces and what it carries. 54 levels, from GoToRedBallGrey to BossLevel.

    ## Action Space
    Text. Primitive MiniGrid actions: ``turn left``, ``turn right``, ``move forward``,
    ``pick up`` (also ``pickup``), ``drop``, ``toggle``. High-level actions on an
    object in view, expanded into primitive actions by a shortest-path planner over the grid:
    ``go to COLOR TYPE`` (end facing it), ``pick up COLOR TYPE`` (also ``pickup``: AgentGym's
    prompt said "pick up" while its parser only took "pickup"; both work), ``open COLOR door``
    (a locked door needs the matching key in hand), ``go through COLOR door`` (open it if
    needed and step through), ``drop next to COLOR TYPE`` (put the carried object down beside
    it). When several objects share a description, append a number (``go to red ball 2``,
    nearest first). Every primitive step counts towards BabyAI's step limit.
    ``info["admissible_actions"]`` lists the actions available now.

    With ``actions="agentgym"`` AgentGym's action forms are accepted as well:
    ``go through COLOR STATE door N`` and ``toggle and go through COLOR STATE door N`` (STATE is
    the door's current state, ``open``, ``closed`` or ``locked``; a wrong state is rejected with
    the right one named; either verb opens a closed door on the way, a locked one needs its key
    in hand) and ``check available actions``, and the available actions are listed in AgentGym's
    forms: ``turn left``, ``turn right``, ``move forward``, ``go to COLOR TYPE N``,
    ``pickup COLOR TYPE N``, ``go through COLOR open door N``, ``toggle and go through COLOR
    closed|locked door N``, ``drop``, ``toggle``, ``check available actions`` (always numbered,
    nearest first); ``check available actions`` is then a valid action that describes the view
    again and spends no primitive step. The llmgym forms above still parse. The oracle's
    actions are in AgentGym's forms (its bare ``pick up`` becomes ``pickup COLOR TYPE N`` of the
    object in front).

    ## Observation Space
    Text: what the last action did, the objects in view with relative positions, what the
    agent faces, what it carries, and (``show_admissible``) the available actions. The
    instruction is ``Your goal: MISSION``.

    With ``actions="agentgym"`` every observation that describes the view starts with
    ``Your goal: MISSION`` and ends with ``Available actions: [...]`` as a JSON list, the shape of
    AgentGym's observations. What still differs from AgentGym: the view is worded by llmgym
    ("a red ball 2 steps ahead and 1 step to your right", not "There is a red ball 1 2 steps in
    front of you ..."), the feedback lines of actions and invalid actions are llmgym's, and
    ``check available actions`` spends no step.

    ## Rewards
    BabyAI's: ``1 - 0.9 * steps / max_steps`` when the mission is completed (``steps`` counts
    primitive steps, so a high-level action costs its full path), 0 otherwise.

    ## Starting State
    The level's randomly generated layout and mission. Task ids cycle through the levels
    (``train/00000`` is the first level, ``train/00001`` the second, ...), each with 1,000
    train and 100 eval seeds. A layout belongs to the split chosen by a hash of its content
    (level, grid, agent, mission), so no layout appears in both splits.

    ## Episode End
    Terminates when the mission is completed (``info["success"] = True``) or failed (e.g. the
    wrong object picked up where BabyAI forbids it). Truncated when BabyAI's step limit for the
    level (``max_steps`` primitive steps) is used up, or after as many turns. Actions that are
    not understood or not possible change nothing. The oracle is MiniGrid's ``BabyAIBot``,
    which plays primitive actions (measured: see docs/environments/babyai.md).

    ## Arguments
    ``gymnasium.make("llmgym/BabyAI-v0", level="GoToLocal")``; see :class:`BabyAIConfig`
    (``level``, ``show_admissible``, ``actions``: ``"llmgym"`` or ``"agentgym"``).

    ## Version History
    * v0: Initial version (MiniGrid 3); the ``actions`` option (AgentGym's action forms) was
      added later, its default keeps the original play.
    """

    config_class = BabyAIConfig
    env_name = "babyai"
    rules_text = (
        "You are an agent in a grid world of rooms with doors, keys, balls and boxes. "
        "Complete the goal. " + _HELP + " A locked door opens with the key of its color; "
        "you can carry one object at a time."
    )
    example = (
        "Observation: You see a red ball 2 steps ahead and 1 step to your right. You face "
        "nothing; a wall is 4 steps ahead. You are carrying nothing.\n"
        "Thought: The goal is the red ball; the planner can walk me there.\n"
        "Action: go to red ball"
    )

    _grid_env: Any = None
    _level = ""
    _turns = 0
    _bot: Any = None
    _suggestion: int | None = None
    _seen: list[_Seen]
    _image: np.ndarray
    _reachable: set[tuple[int, int]]
    _instance_key = ""

    def __init__(self, config: BabyAIConfig | dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._levels: dict[str, MiniGridEnv] = {}
        """The MiniGrid environment of each level played so far, reused across episodes."""

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: BabyAIConfig | None = None) -> TaskIdRange:
        config = config or self.config
        levels = 1 if config.level is not None else len(LEVELS)
        seeds = TRAIN_SEEDS_PER_LEVEL if split == "train" else EVAL_SEEDS_PER_LEVEL
        return TaskIdRange(split, levels * seeds)

    def instance_key(self) -> str:
        return self._instance_key

    def _reset_task(self, task: Task[BabyAIConfig]) -> tuple[str, str]:
        config = task.config
        self._level = config.level or LEVELS[task.index % len(LEVELS)]
        env = self._levels.get(self._level)
        if env is None:
            level_id = _GYM_IDS.get(self._level, f"BabyAI-{self._level}-v0")
            env = self._levels[self._level] = cast("MiniGridEnv", gym.make(level_id).unwrapped)
        self._grid_env = env
        for attempt in range(_MAX_ATTEMPTS):
            seed = TaskRng(self.env_name, task.task_id, attempt).randbelow(2**31)
            with contextlib.redirect_stdout(io.StringIO()):  # MiniGrid prints rejected samples
                observation, _ = env.reset(seed=seed)
            self._instance_key = self._content()
            if split_of(self._instance_key, eval_fraction=0.5) == task.split:
                break
        self._image = observation["image"]
        self._turns = 0
        self._bot = None
        self._suggestion = None
        return self._describe(""), f"Your goal: {env.mission}"

    def _content(self) -> str:
        env = self._grid_env
        grid = hashlib.sha256(env.grid.encode().tobytes()).hexdigest()
        return f"{self._level}|{env.mission}|{grid}|{tuple(env.agent_pos)}|{env.agent_dir}"

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        self._turns += 1
        command = normalize_command(action, max_length=200)
        command = _PRIMITIVE_ALIASES.get(command, command)
        if command in _PRIMITIVES:
            problem = self._primitive_problem(command)
            if problem is None:
                return self._execute([_PRIMITIVES[command]], "")
            result = self.invalid(problem)
        elif match := _HIGH_LEVEL.match(command):
            plan, done_text = self._plan(
                match["verb"], match["color"], "", match["kind"], match["number"]
            )
            if not isinstance(plan, str):
                return self._execute(plan, done_text)
            result = self.invalid(plan)
        elif self._agentgym and (match := _DOOR_WITH_STATE.match(command)):
            plan, done_text = self._plan(
                match["verb"], match["color"], match["state"], match["kind"], match["number"]
            )
            if not isinstance(plan, str):
                return self._execute(plan, done_text)
            result = self.invalid(plan)
        elif command == "check available actions" and self._agentgym:
            result = Transition(observation=self._describe("The available actions are:"))
        elif command == "check available actions":
            result = self.invalid(self._describe("Nothing happens; the available actions are:"))
        else:
            result = self.invalid(f"{self.quote(action)} is not an action here. {_HELP}")
        result.truncated = self._turns >= self._grid_env.max_steps
        return result

    def _execute(self, plan: list[int], done_text: str) -> Transition:
        env = self._grid_env
        total, terminated, truncated = 0.0, False, False
        before = _snapshot(env)
        for code in plan:
            observation, reward, terminated, truncated, _ = env.step(code)
            self._image = observation["image"]
            total += float(reward)
            if self._bot is not None:
                self._suggestion = self._replan(code)
            if terminated or truncated:
                break
        if not done_text:
            done_text = _primitive_outcome(plan[0], before, env)
        truncated = truncated or (not terminated and self._turns >= env.max_steps)
        success = terminated and total > 0
        if success:
            text = f"{done_text} Mission complete!"
        elif terminated:
            text = f"{done_text} The mission failed."
        else:
            text = self._describe(done_text)
        return Transition(
            observation=text,
            reward=total,
            terminated=terminated,
            truncated=truncated,
            success=success,
            info={"primitive_steps": env.step_count, "max_steps": env.max_steps},
        )

    def _primitive_problem(self, command: str) -> str | None:
        """Why a primitive action would do nothing here (``None``: it has an effect). MiniGrid
        would spend a step on it; llmgym rejects it and spends none."""
        env = self._grid_env
        front = env.grid.get(*env.front_pos)
        blocked = f"the {_label(front)}" if front is not None else "nothing"
        if command == "move forward" and not self._free(*env.front_pos):
            blocker = "a wall" if front.type == "wall" else blocked
            return f"You cannot move forward: {blocker} is in the way."
        if command == "pick up":
            if env.carrying is not None:
                return f"You are already carrying a {_name(env.carrying)}; drop it first."
            if front is None or not front.can_pickup():
                return f"There is nothing you can pick up in front of you (you face {blocked})."
        if command == "drop":
            if env.carrying is None:
                return "You are not carrying anything to drop."
            if front is not None:
                return f"You cannot drop the {_name(env.carrying)} here: you face {blocked}."
        if command == "toggle":
            if front is None or front.type not in ("door", "box"):
                return f"There is nothing to toggle in front of you (you face {blocked})."
            if front.type == "door" and front.is_locked and not _holds_key_for(env.carrying, front):
                return f"The {front.color} door is locked: you need the {front.color} key."
        return None

    def _plan(
        self, verb: str, color: str, state: str, kind: str, number: str | None
    ) -> tuple[list[int] | str, str]:
        """Primitive actions for a high-level command, or why it cannot be done. ``state`` is
        the door state an AgentGym door form names ("" when none is named)."""
        target = self._find(color.replace("gray", "grey"), kind, number)
        if isinstance(target, str):
            return target, ""
        env = self._grid_env
        cell = env.grid.get(*target.position)
        if state and _door_state(cell) != state:
            return f"The {target.name} is not {state}: it is {_door_state(cell)}.", ""
        if verb == "go to":
            path = self._path_to_face({target.position})
            return path, f"You go to the {target.name}."
        if verb in ("pick up", "pickup"):
            if env.carrying is not None:
                return f"You are already carrying a {_name(env.carrying)}; drop it first.", ""
            if not cell.can_pickup():
                return f"The {target.name} cannot be picked up.", ""
            path = self._path_to_face({target.position})
            return _then(path, _PRIMITIVES["pick up"]), f"You pick up the {target.name}."
        if verb == "open":
            if cell.type != "door":
                return f"The {target.name} is not a door.", ""
            if cell.is_open:
                return f"The {target.name} is already open.", ""
            if cell.is_locked and not _holds_key_for(env.carrying, cell):
                return f"The {target.name} is locked: you need the {cell.color} key.", ""
            path = self._path_to_face({target.position})
            return _then(path, _PRIMITIVES["toggle"]), f"You open the {target.name}."
        if verb in ("go through", "toggle and go through"):
            if cell.type != "door":
                return f"The {target.name} is not a door.", ""
            if cell.is_locked and not _holds_key_for(env.carrying, cell):
                return f"The {target.name} is locked: you need the {cell.color} key.", ""
            path = self._path_to_face({target.position})
            if isinstance(path, str):
                return path, ""
            plan = path + ([] if cell.is_open else [_PRIMITIVES["toggle"]])
            return plan + [_PRIMITIVES["move forward"]] * 2, f"You go through the {target.name}."
        # drop next to
        if env.carrying is None:
            return "You are not carrying anything to put down.", ""
        spots = {
            (target.position[0] + dx, target.position[1] + dy)
            for dx, dy in _DIRECTIONS
            if self._free(target.position[0] + dx, target.position[1] + dy)
            and (target.position[0] + dx, target.position[1] + dy) != tuple(env.agent_pos)
        }
        path = self._path_to_face(spots)
        return _then(path, _PRIMITIVES["drop"]), (
            f"You put the {_name(env.carrying)} down next to the {target.name}."
        )

    def _find(self, color: str, kind: str, number: str | None) -> _Seen | str:
        matches = [seen for seen in self._seen if seen.name == f"{color} {kind}"]
        if not matches:
            visible = join_names(sorted({seen.name for seen in self._seen})) or "nothing"
            return f"You cannot see a {color} {kind}. In view: {visible}."
        index = int(number) - 1 if number else 0
        if not 0 <= index < len(matches):
            return f"There are {len(matches)} {color} {kind}s in view; use 1 to {len(matches)}."
        return matches[index]

    def _free(self, x: int, y: int) -> bool:
        env = self._grid_env
        if not (0 <= x < env.width and 0 <= y < env.height):
            return False
        cell = env.grid.get(x, y)
        return cell is None or cell.can_overlap()

    def _path_to_face(self, targets: set[tuple[int, int]]) -> list[int] | str:
        """Shortest turn/forward sequence that ends facing one of ``targets`` (breadth-first
        search over position and direction; only free cells are walked through)."""
        env = self._grid_env
        start = (int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir))
        previous: dict[tuple[int, int, int], tuple[tuple[int, int, int], int] | None] = {
            start: None
        }
        queue = deque([start])
        while queue:
            state = queue.popleft()
            x, y, direction = state
            dx, dy = _DIRECTIONS[direction]
            if (x + dx, y + dy) in targets:
                actions = []
                step = previous[state]
                while step is not None:
                    state, action = step
                    actions.append(action)
                    step = previous[state]
                return actions[::-1]
            successors = [((x, y, (direction - 1) % 4), 0), ((x, y, (direction + 1) % 4), 1)]
            if self._free(x + dx, y + dy):
                successors.append(((x + dx, y + dy, direction), 2))
            for successor, action in successors:
                if successor not in previous:
                    previous[successor] = (state, action)
                    queue.append(successor)
        return "There is no path leading there: something blocks the way."

    # ------------------------------------------------------------------ description
    def _describe(self, prefix: str) -> str:
        self._seen = self._visible_objects()
        self._reachable = self._reachable_cells()
        if self._seen:
            things = "; ".join(f"a {seen.label} {_where(seen)}" for seen in self._seen)
            view = f"You see {things}."
        else:
            view = "You see no objects nearby."
        parts = [prefix, view, self._facing(), self._carrying()]
        if self._agentgym:
            parts.insert(0, f"Your goal: {self._grid_env.mission}")
        if self.task.config.show_admissible:
            if self._agentgym:
                parts.append("Available actions: " + json.dumps(self.admissible_actions()))
            else:
                parts.append("Available actions: " + ", ".join(self.admissible_actions()) + ".")
        return "\n".join(part for part in parts if part)

    @property
    def _agentgym(self) -> bool:
        return self.task.config.actions == "agentgym"

    def _visible_objects(self) -> list[_Seen]:
        """The objects in MiniGrid's egocentric view (its observation image: the agent at the
        bottom centre looking up; occluded cells are encoded as unseen)."""
        env = self._grid_env
        size = env.agent_view_size
        seen = []
        for i, j in np.argwhere(np.isin(self._image[:, :, 0], _OBJECT_CODES)):
            ahead, right = size - 1 - int(j), int(i) - size // 2
            if ahead == 0 and right == 0:
                continue  # the carried object is drawn in the agent's cell
            x, y = env.agent_pos + ahead * env.dir_vec + right * env.right_vec
            cell = env.grid.get(int(x), int(y))
            seen.append(_Seen(_name(cell), _label(cell), (int(x), int(y)), ahead, right))
        seen.sort(key=lambda s: (s.distance, -s.ahead, s.right, s.name))
        return seen

    def _facing(self) -> str:
        env = self._grid_env
        front = env.grid.get(*env.front_pos)
        if front is not None and front.type != "wall":
            return f"You are facing a {_label(front)}."
        steps, position = 1, env.front_pos
        while self._free(*position):
            steps += 1
            position = position + env.dir_vec
        if steps == 1:
            return "You are facing a wall."
        blocker = env.grid.get(*position)
        what = "a wall" if blocker is None or blocker.type == "wall" else f"a {_label(blocker)}"
        return (
            f"The way ahead is clear for {steps - 1} step{'s' if steps > 2 else ''}, then {what}."
        )

    def _carrying(self) -> str:
        carried = self._grid_env.carrying
        return f"You are carrying a {_name(carried)}." if carried else "You are carrying nothing."

    # ------------------------------------------------------------------ oracle and actions
    def oracle_action(self) -> str:
        if self._bot is None:
            self._bot = _bot_module.BabyAIBot(self._grid_env)
            self._suggestion = self._replan(None)
        # The bot answers "done" only once the mission is complete; turning is harmless then.
        if self._suggestion is None:
            return "turn left"
        action = _ACTION_NAMES.get(self._suggestion, "turn left")
        if action == "pick up" and self._agentgym:
            return self._agentgym_pickup()
        return action

    def _agentgym_pickup(self) -> str:
        """The object in front of the agent, as AgentGym's ``pickup COLOR TYPE N``."""
        env = self._grid_env
        front = tuple(int(v) for v in env.front_pos)
        named = [seen for seen in self._seen if seen.position == front]
        if not named:
            return "pick up"  # nothing in view there: the bare form explains why
        same = [seen for seen in self._seen if seen.name == named[0].name]
        return f"pickup {named[0].name} {same.index(named[0]) + 1}"

    def _replan(self, action_taken: int | None) -> int | None:
        try:
            return int(self._bot.replan(action_taken))
        except Exception:  # the bot's plan broke (e.g. the agent opened a box): start afresh
            self._bot = _bot_module.BabyAIBot(self._grid_env)
            try:
                return int(self._bot.replan(None))
            except Exception:
                return None

    def admissible_actions(self) -> list[str]:
        if self._agentgym:
            return self._agentgym_actions()
        env = self._grid_env
        actions = ["turn left", "turn right"]
        if self._free(*env.front_pos):
            actions.append("move forward")
        counts: dict[str, int] = {}
        for seen in self._seen:
            counts[seen.name] = counts.get(seen.name, 0) + 1
        numbered: dict[str, int] = {}
        agent = (int(env.agent_pos[0]), int(env.agent_pos[1]))
        for seen in self._seen:
            numbered[seen.name] = numbered.get(seen.name, 0) + 1
            label = seen.name if counts[seen.name] == 1 else f"{seen.name} {numbered[seen.name]}"
            neighbours = _neighbours(seen.position)
            if not neighbours & self._reachable:
                continue
            cell = env.grid.get(*seen.position)
            actions.append(f"go to {label}")
            if cell.can_pickup() and env.carrying is None:
                actions.append(f"pick up {label}")
            if cell.type == "door" and (not cell.is_locked or _holds_key_for(env.carrying, cell)):
                if not cell.is_open:
                    actions.append(f"open {label}")
                actions.append(f"go through {label}")
            if env.carrying is not None and (neighbours & self._reachable) - {agent}:
                actions.append(f"drop next to {label}")
        front = env.grid.get(*env.front_pos)
        if front is not None and front.can_pickup() and env.carrying is None:
            actions.append("pick up")
        if env.carrying is not None and front is None:
            actions.append("drop")
        if self._primitive_problem("toggle") is None:
            actions.append("toggle")
        return actions

    def _agentgym_actions(self) -> list[str]:
        """The available actions in AgentGym's forms (objects always numbered)."""
        env = self._grid_env
        actions = ["turn left", "turn right"]
        if self._free(*env.front_pos):
            actions.append("move forward")
        numbered: dict[str, int] = {}
        for seen in self._seen:
            numbered[seen.name] = number = numbered.get(seen.name, 0) + 1
            if not _neighbours(seen.position) & self._reachable:
                continue
            cell = env.grid.get(*seen.position)
            actions.append(f"go to {seen.name} {number}")
            if cell.can_pickup() and env.carrying is None:
                actions.append(f"pickup {seen.name} {number}")
            if cell.type == "door" and (not cell.is_locked or _holds_key_for(env.carrying, cell)):
                verb = "go through" if cell.is_open else "toggle and go through"
                actions.append(f"{verb} {cell.color} {_door_state(cell)} door {number}")
        if env.carrying is not None and env.grid.get(*env.front_pos) is None:
            actions.append("drop")
        if self._primitive_problem("toggle") is None:
            actions.append("toggle")
        actions.append("check available actions")
        return actions

    def _reachable_cells(self) -> set[tuple[int, int]]:
        """The free cells the agent can walk to (its own cell included). MiniGrid's outer walls
        keep the flat-index neighbours from wrapping around rows."""
        env = self._grid_env
        width = env.width
        free = [cell is None or cell.can_overlap() for cell in env.grid.grid]
        start = int(env.agent_pos[1]) * width + int(env.agent_pos[0])
        seen = bytearray(len(free))
        seen[start] = 1
        queue = [start]
        for index in queue:  # the list grows while it is walked: a breadth-first search
            for neighbour in (index - 1, index + 1, index - width, index + width):
                if 0 <= neighbour < len(free) and not seen[neighbour] and free[neighbour]:
                    seen[neighbour] = 1
                    queue.append(neighbour)
        return {(index % width, index // width) for index in queue}

    def close(self) -> None:
        for env in self._levels.values():
            env.close()
        self._levels.clear()
        super().close()


def _name(obj: Any) -> str:
    """How actions name an object: ``red ball``, ``blue door``."""
    return f"{obj.color} {obj.type}"


def _label(obj: Any) -> str:
    """How observations show an object: doors with their state (``locked blue door``)."""
    if obj.type == "door":
        return f"{_door_state(obj)} {obj.color} door"
    return _name(obj)


def _door_state(door: Any) -> str:
    return "locked" if door.is_locked else ("open" if door.is_open else "closed")


def _where(seen: _Seen) -> str:
    def steps(n: int) -> str:
        return f"{n} step{'s' if n != 1 else ''}"

    parts = []
    if seen.ahead > 0:
        parts.append(f"{steps(seen.ahead)} ahead")
    if seen.right:
        side = "right" if seen.right > 0 else "left"
        parts.append(f"{steps(abs(seen.right))} to your {side}")
    return " and ".join(parts)


def _snapshot(env: Any) -> tuple[Any, Any]:
    """What a primitive action's feedback names: the carried object and the cell in front."""
    return env.carrying, env.grid.get(*env.front_pos)


def _primitive_outcome(code: int, before: tuple[Any, Any], env: Any) -> str:
    """Feedback for one primitive action (already known to have an effect)."""
    carrying, front = before
    name = _ACTION_NAMES[code]
    if name == "move forward":
        return "You move forward."
    if name == "pick up":
        return f"You pick up the {_name(env.carrying)}."
    if name == "drop":
        return f"You drop the {_name(carrying)}."
    if name == "toggle":
        if front.type == "box":
            return f"You open the {front.color} box."
        return f"The {front.color} door is now {'open' if front.is_open else 'closed'}."
    return f"You {name}."


def _neighbours(position: tuple[int, int]) -> set[tuple[int, int]]:
    return {(position[0] + dx, position[1] + dy) for dx, dy in _DIRECTIONS}


def _then(path: list[int] | str, action: int) -> list[int] | str:
    return path if isinstance(path, str) else [*path, action]


def _holds_key_for(carrying: Any, door: Any) -> bool:
    return carrying is not None and carrying.type == "key" and carrying.color == door.color
