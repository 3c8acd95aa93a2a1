"""Weather: answer questions about past, present and forecast weather with a simulated weather
service (location lookup, daily, hourly and air-quality queries, as in AgentGym's weather tools).

* :mod:`~llmgym.envs.tools.weather.world` — the cities and their simulated weather;
* :mod:`~llmgym.envs.tools.weather.toolkit` — the service's tools;
* :mod:`~llmgym.envs.tools.weather.goals` — the goal templates;
* :mod:`~llmgym.envs.tools.weather.env` — :class:`WeatherEnv`.
"""

from llmgym.envs.tools.weather.env import WeatherConfig, WeatherEnv
from llmgym.envs.tools.weather.world import (
    City,
    DayWeather,
    air_quality_level,
    cities,
    day_weather,
    haversine_km,
)

__all__ = [
    "City",
    "DayWeather",
    "WeatherConfig",
    "WeatherEnv",
    "air_quality_level",
    "cities",
    "day_weather",
    "haversine_km",
]
