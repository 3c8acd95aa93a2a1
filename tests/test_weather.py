"""Weather: the simulated weather service's data and rules, its tools' results and its goals."""

from __future__ import annotations

import json
from datetime import date, timedelta

import gymnasium as gym
import pytest

from llmgym.envs.tools.weather import (
    WeatherEnv,
    air_quality_level,
    cities,
    day_weather,
    haversine_km,
)
from llmgym.envs.tools.weather.world import split_cities


def city(name: str, country: str):
    return next(c for c in cities() if c.name == name and c.country == country)


@pytest.fixture
def env() -> WeatherEnv:
    env = gym.make("llmgym/Weather-v0").unwrapped
    env.reset(options={"task_id": "train/00000"})
    return env


def act(env: WeatherEnv, tool_name: str, /, **arguments) -> tuple[object, bool]:
    observation, _, _, _, info = env.step(
        f"Action: {tool_name} with Action Input: {json.dumps(arguments)}"
    )
    try:
        return json.loads(observation), info["invalid_action"]
    except json.JSONDecodeError:
        return observation, info["invalid_action"]


def test_weather_is_a_consistent_pure_function_of_city_and_day() -> None:
    oslo = city("Oslo", "NO")
    day = date(2022, 3, 14)
    weather = day_weather(oslo, day)
    day_weather.cache_clear()
    assert day_weather(oslo, day) == weather
    hourly = weather.hourly()
    assert len(hourly) == 24
    assert max(hourly) == weather.t_max and min(hourly) == weather.t_min
    assert hourly[15] == weather.t_max and hourly[5] == weather.t_min
    assert weather.t_min <= weather.t_mean <= weather.t_max
    for day_ in (date(2021, 1, 1) + timedelta(days=i) for i in range(0, 730, 7)):
        w = day_weather(oslo, day_)
        assert w.rain >= 0 and w.snow >= 0 and w.pm25 >= 1
        if w.snow > 0:
            assert w.t_mean < 2.0


def test_seasons_follow_the_hemisphere() -> None:
    def mean(place, month: int) -> float:
        days = [
            date(year, month, 15) + timedelta(days=d) for year in (2021, 2022) for d in range(-7, 8)
        ]
        return sum(day_weather(place, d).t_mean for d in days) / len(days)

    assert mean(city("Moscow", "RU"), 7) > mean(city("Moscow", "RU"), 1) + 10
    assert mean(city("Melbourne", "AU"), 1) > mean(city("Melbourne", "AU"), 7) + 4
    assert mean(city("La Paz", "BO"), 7) < mean(city("Lima", "PE"), 7)  # 3,640 m vs 154 m


def test_air_quality_bands() -> None:
    assert [air_quality_level(v) for v in (0, 9.9, 10, 19.9, 24.9, 49, 74.9, 75, 300)] == [
        "good", "good", "fair", "fair", "moderate", "poor", "very poor", "extremely poor",
        "extremely poor",
    ]  # fmt: skip


def test_distance() -> None:
    london, paris = city("London", "GB"), city("Paris", "FR")
    assert haversine_km(london.latitude, london.longitude, paris.latitude, paris.longitude) == (
        pytest.approx(344, abs=2)
    )
    assert haversine_km(10, 20, 10, 20) == 0


def test_location_lookup_handles_shared_names(env: WeatherEnv) -> None:
    result, invalid = act(env, "get_latitude_longitude", name="Paris")
    assert not invalid
    assert [(r["name"], r["country_code"]) for r in result["results"]] == [
        ("Paris", "FR"),
        ("Paris", "US"),
    ]
    result, _ = act(env, "get_latitude_longitude", name="paris, United States")
    assert [r["country_code"] for r in result["results"]] == ["US"]
    result, _ = act(env, "get_latitude_longitude", name="Portland, US")
    assert len(result["results"]) == 2
    result, invalid = act(env, "get_latitude_longitude", name="Gotham")
    assert invalid and "no place named 'Gotham'" in result


def test_queries_answer_for_the_city_within_50_km(env: WeatherEnv) -> None:
    oslo = city("Oslo", "NO")
    result, invalid = act(
        env, "get_elevation", latitude=oslo.latitude + 0.1, longitude=oslo.longitude
    )
    assert not invalid and result["elevation"] == oslo.elevation
    result, invalid = act(
        env, "get_elevation", latitude=oslo.latitude + 1.0, longitude=oslo.longitude
    )
    assert invalid and "no weather data within 50 km" in result
    result, invalid = act(env, "get_elevation", latitude=95, longitude=0)
    assert invalid and "latitude must be in [-90, 90]" in result


def test_date_ranges_follow_the_service_rules(env: WeatherEnv) -> None:
    oslo = city("Oslo", "NO")
    at = {"latitude": oslo.latitude, "longitude": oslo.longitude}
    today = env._state.today
    yesterday, tomorrow = today - timedelta(days=1), today + timedelta(days=1)
    result, invalid = act(
        env,
        "get_historical_temp",
        **at,
        start_date=str(yesterday - timedelta(days=2)),
        end_date=str(yesterday),
    )
    assert not invalid
    assert result["daily"]["time"][-1] == str(yesterday)
    assert result["daily"]["temperature_2m_max"][-1] == day_weather(oslo, yesterday).t_max
    assert result["daily_units"]["temperature_2m_max"] == "°C"
    result, invalid = act(
        env, "get_historical_rain", **at, start_date=str(yesterday), end_date=str(today)
    )
    assert invalid and f"historical data ends yesterday ({yesterday})" in result
    result, invalid = act(
        env,
        "get_rain_forecast",
        **at,
        start_date=str(tomorrow),
        end_date=str(today + timedelta(days=16)),
    )
    assert invalid and "forecasts cover" in result
    result, invalid = act(
        env,
        "get_snow_forecast",
        **at,
        start_date=str(today),
        end_date=str(today + timedelta(days=15)),
    )
    assert not invalid and len(result["daily"]["snowfall_sum"]) == 16
    result, invalid = act(
        env, "get_historical_temp", **at, start_date="2020-01-01", end_date="2020-06-01"
    )
    assert invalid and "at most 92 days" in result
    result, invalid = act(
        env, "get_historical_temp", **at, start_date="2020-02-30", end_date="2020-03-01"
    )
    assert invalid and 'start_date "2020-02-30" is not a date in the form YYYY-MM-DD' in result
    result, invalid = act(
        env, "get_historical_temp", **at, start_date="2020-03-05", end_date="2020-03-01"
    )
    assert invalid and "before start_date" in result
    result, invalid = act(env, "get_current_temp", **at, current_date=str(yesterday))
    assert invalid and "is not today" in result
    result, invalid = act(env, "get_current_air_quality_index", **at, current_date=str(today))
    assert not invalid and result["daily"]["pm2_5"] == [day_weather(oslo, today).pm25]
    result, invalid = act(env, "get_hourly_temp", **at, date=str(tomorrow))
    assert not invalid and result["hourly"]["temperature_2m"] == list(
        day_weather(oslo, tomorrow).hourly()
    )


def test_user_context_tools(env: WeatherEnv) -> None:
    assert act(env, "get_user_current_date") == (str(env._state.today), False)
    observation, invalid = act(env, "get_user_current_location")
    assert observation == env._state.home.name and not invalid


def test_eval_goals_only_mention_eval_cities() -> None:
    env = gym.make("llmgym/Weather-v0").unwrapped
    train_only = {c.name for c in split_cities("train")} - {c.name for c in split_cities("eval")}
    for index in range(60):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        words = env.instruction
        assert not any(f" {name}" in words for name in train_only if len(name) > 4), words


def test_every_level_has_goals() -> None:
    for level in (1, 2, 3):
        env = gym.make("llmgym/Weather-v0", min_level=level, max_level=level).unwrapped
        env.reset(seed=level)
        assert env._episode.plan[-1].name == "finish"
