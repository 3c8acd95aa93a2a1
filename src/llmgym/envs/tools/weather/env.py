"""Weather: answer questions about past, present and forecast weather with a simulated weather
service (location lookup, daily, hourly and air-quality queries, as in AgentGym's weather tools)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import numpy as np

from llmgym.core import Task
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import CurrentDate, Tool, ToolConfig, ToolEnv, prompt_texts
from llmgym.envs.tools.weather.goals import WeatherGoals
from llmgym.envs.tools.weather.toolkit import Places, WeatherQueries, WeatherState
from llmgym.envs.tools.weather.world import cities, homes

__all__ = ["WeatherConfig", "WeatherEnv"]


@dataclass(frozen=True)
class WeatherConfig(ToolConfig):
    """Difficulty knobs of :class:`WeatherEnv`."""


class WeatherEnv(ToolEnv[WeatherConfig, WeatherState]):
    """Answer weather questions by calling the tools of a simulated weather service.

    ## Description
    AgentGym's Weather environment, offline. A deterministic weather service covers 226 cities
    with coordinates and elevations (a few names, such as Paris or Portland, belong to several
    places): daily temperature (maximum, minimum, mean), rain, snowfall and PM2.5 air quality from
    2000-01-01 up to a 16-day forecast, and hourly temperatures, all simulated from each city's
    latitude and elevation with a seasonal cycle, weather waves and day-to-day noise. The user has
    a current date and location. Goals are generated from 17 templates at three levels: single
    lookups ("How much rain fell in Lima on 2022-04-03?"), questions relative to today or to the
    user's location, and multi-step comparisons ("Which is warmer today on average, Oslo or
    Riga?"). Eval goals are about cities that no train goal mentions.

    ## Action Space
    Text: one tool call per turn, either ``Action: TOOL with Action Input: {JSON}`` (AgentGym's
    form, a thought may precede it) or a JSON function call ``{"name": TOOL, "arguments": {...}}``
    (OpenAI ``tool_calls`` objects too). Tools: ``get_user_current_date``,
    ``get_user_current_location``, ``get_latitude_longitude(name)``, ``get_elevation``,
    ``get_distance``, ``get_historical_{temp,rain,snow}``, ``get_{temp,rain,snow}_forecast``,
    ``get_current_{temp,rain,snow}``, ``get_hourly_temp``, ``get_historical_air_quality_index``,
    ``get_current_air_quality_index``, ``get_air_quality_level``, ``check_valid_actions`` and
    ``finish(answer)``; ``rules()`` lists their arguments and types. Weather queries take
    coordinates and answer for the city within 50 km. A call that cannot be parsed, names an
    unknown tool, or has missing, unknown or mistyped arguments (or a date outside the data) gets
    feedback naming the tool, the argument and the expected type, sets
    ``info["invalid_action"]`` and changes nothing.

    ## Observation Space
    Text. On reset: ``Goal: ...`` and the tool signatures. After a call: the tool's result as
    JSON (Open-Meteo-like ``daily`` arrays for weather queries), or the error.

    With ``prompt_style="agentgym"`` the reset and step texts are worded as AgentGym's tool
    servers word them (``Now new trial starts. ...``, ``Observation: ...`` then ``Give me one
    action.``); docs/tool-environments.md gives them exactly.

    ## Rewards
    ``1.0`` when ``finish`` is called with the true answer, else ``0.0``. Numbers match within
    max(0.1, 1% of the true value) (a number inside a string such as ``"12.5 °C"`` counts);
    dates must be ``YYYY-MM-DD``; names and yes/no are compared ignoring case and punctuation.

    With ``reward="progress"`` the rewards pay out AgentGym's progress rate (subgoals met by any
    tool result, as defined in docs/tool-environments.md; ``info["progress"]`` holds the rate);
    here any rate above 0 counts as 1.0, as AgentGym's Weather server does (so the first result
    on the oracle's path, often today's date, already scores 1.0).

    ## Starting State
    The user's current date (2021-2024) and location are drawn with the goal; nothing is looked
    up yet.

    ## Episode End
    Terminates when ``finish`` is called (``info["success"]`` says whether the answer is right;
    ``info["expected_answer"]`` gives the truth). Truncated by the registered turn limit (10
    turns, as in AgentGym); invalid calls use a turn.

    ## Arguments
    ``gymnasium.make("llmgym/Weather-v0", min_level=1, max_level=3, action_format="any")``; see
    :class:`WeatherConfig`. ``env.unwrapped.tool_schemas()`` gives the tools in OpenAI's
    function-calling format. ``reward``: ``"finish"`` or
    ``"progress"``; ``prompt_style``: ``"llmgym"`` or ``"agentgym"``.

    ## Version History
    * v0: Initial version; the ``reward`` and ``prompt_style`` options (AgentGym's variant)
      were added later, their defaults keep the original play.
    """

    config_class = WeatherConfig
    env_name = "weather"
    abs_tolerance = 0.1
    rel_tolerance = 0.01
    service, notes, example = prompt_texts("weather")
    toolkits = (CurrentDate, Places, WeatherQueries)
    goals = WeatherGoals

    # ------------------------------------------------------------------ state
    def _setup(self, task: Task[WeatherConfig], rng: TaskRng) -> WeatherState:
        today = date(2021, 1, 1) + timedelta(days=rng.randbelow(4 * 365))
        return WeatherState(today, rng.choice(homes(task.split)))

    def _state_key(self) -> str:
        return f"{self._state.today} {self._state.home.key}"

    def _progress_rate(self) -> float:
        """AgentGym's Weather server reports any progress above 0 as 1.0."""
        return 1.0 if self._subgoal_rate() > 0 else 0.0

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        if param == "name":
            return [c.name for c in cities()[:60]]
        if param == "date":
            return [(self._state.today + timedelta(days=i)).isoformat() for i in range(-6, 7)]
        if param == "air_quality_index":
            return [5.0, 12.5, 22.0, 30.0, 60.0, 80.0]
        return None

    def _sample_arguments(self, selected: Tool, rng: np.random.Generator) -> dict[str, Any]:
        arguments = super()._sample_arguments(selected, rng)
        today = self._state.today
        for suffix in ("", "1", "2"):  # coordinates of a real city, so that the call is valid
            if f"latitude{suffix}" in arguments:
                city = cities()[int(rng.integers(len(cities())))]
                arguments[f"latitude{suffix}"] = city.latitude
                arguments[f"longitude{suffix}"] = city.longitude
        if "current_date" in arguments:
            arguments["current_date"] = today.isoformat()
        if "start_date" in arguments:  # a valid range for the tool's kind of data
            first = int(rng.integers(1, 15))
            length = int(rng.integers(0, 7))
            if "forecast" in selected.name:
                start = today + timedelta(days=first - 1)
                end = min(start + timedelta(days=length), today + timedelta(days=15))
            else:
                end = today - timedelta(days=first)
                start = end - timedelta(days=length)
            arguments["start_date"], arguments["end_date"] = start.isoformat(), end.isoformat()
        return arguments
