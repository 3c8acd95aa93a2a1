"""Weather: answer questions about past, present and forecast weather with a simulated weather
service (location lookup, daily, hourly and air-quality queries, as in AgentGym's weather tools)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from typing import Any, ClassVar, NamedTuple

import numpy as np

from llmgym.core import Task
from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.base import (
    Answer,
    CurrentDateTool,
    DerivedCall,
    Episode,
    ItemSplit,
    PlanStep,
    Results,
    Tool,
    ToolCall,
    ToolConfig,
    ToolEnv,
    ToolError,
    ToolTable,
    call,
    goal_template,
    load_data,
    normalize_answer,
    parse_iso_date,
    prompt_texts,
    search_results,
    tool,
)

__all__ = ["City", "DayWeather", "WeatherConfig", "WeatherEnv", "air_quality_level", "cities"]

FIRST_DAY = date(2000, 1, 1)
FORECAST_DAYS = 16
MAX_RANGE_DAYS = 92
STATION_RADIUS_KM = 50.0
_AIR_QUALITY_BANDS = (
    (10.0, "good"),
    (20.0, "fair"),
    (25.0, "moderate"),
    (50.0, "poor"),
    (75.0, "very poor"),
)
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class City:
    """A place of the simulated weather service (coordinates as in the data file). Cities are
    singletons (see :func:`cities`), compared and hashed by identity."""

    name: str
    country: str
    country_name: str
    latitude: float
    longitude: float
    elevation: float
    population: int

    @property
    def key(self) -> str:
        return f"{self.name}, {self.country}"


class DayWeather(NamedTuple):
    """One day's simulated weather at a city (a tuple of floats, which the garbage collector
    does not track: the day cache can hold many)."""

    t_max: float
    t_min: float
    t_mean: float
    rain: float
    snow: float
    pm25: float

    def hourly(self) -> tuple[float, ...]:
        """The 24 hourly temperatures: coldest at 05:00 (``t_min``), warmest at 15:00."""
        span = self.t_max - self.t_min
        return tuple(round(self.t_min + span * weight, 1) for weight in _DIURNAL)


def _diurnal_weight(hour: int) -> float:
    """Where ``hour`` lies between the day's minimum (0) and maximum (1)."""
    if 5 <= hour <= 15:
        return (1 - math.cos(math.pi * (hour - 5) / 10)) / 2
    return 1 - (1 - math.cos(math.pi * ((hour - 15) % 24) / 14)) / 2


_DIURNAL = tuple(_diurnal_weight(hour) for hour in range(24))
_DIURNAL_MEAN = sum(_DIURNAL) / 24


@cache
def cities() -> tuple[City, ...]:
    """Every city of the service, most populous first."""
    data = load_data("cities")
    rows = [
        City(name, cc, data["countries"][cc], lat, lon, elev, pop)
        for name, cc, lat, lon, elev, pop in data["cities"]
    ]
    return tuple(sorted(rows, key=lambda c: (-c.population, c.key)))


@cache
def _names() -> dict[str, tuple[City, ...]]:
    index: dict[str, list[City]] = {}
    for city in cities():
        index.setdefault(normalize_answer(city.name), []).append(city)
    return {name: tuple(found) for name, found in index.items()}


_split_cities = ItemSplit("weather", cities, lambda city: city.key)


@cache
def _by_coordinates() -> dict[tuple[float, float], City]:
    return {(c.latitude, c.longitude): c for c in cities()}


def _shares_name(city: City) -> bool:
    return len(_names()[normalize_answer(city.name)]) > 1


@cache
def _homes(split: str) -> tuple[City, ...]:
    """Cities of ``split`` that can be the user's location (their name is unambiguous)."""
    return tuple(c for c in _split_cities(split) if not _shares_name(c))


@cache
def _cold_cities(split: str) -> tuple[City, ...]:
    """Cities of ``split`` whose winter mean is near or below freezing."""
    return tuple(
        c for c in _split_cities(split) if _climate(c).annual_mean - _climate(c).amplitude < 2
    )


def _place(city: City) -> dict[str, Any]:
    """A city as the location lookup shows it."""
    return {
        "name": city.name,
        "latitude": city.latitude,
        "longitude": city.longitude,
        "country_code": city.country,
        "country": city.country_name,
    }


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres (mean Earth radius 6371 km)."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlmb = phi2 - phi1, math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(a)))


def air_quality_level(index: float) -> str:
    """The air-quality level of a PM2.5 index (µg/m³), in the European index's bands."""
    for limit, level in _AIR_QUALITY_BANDS:
        if index < limit:
            return level
    return "extremely poor"


def _day_rng(city_seed: int, day_number: int) -> TaskRng:
    """The generator of one city-day, seeded from the city's seed and the day number without
    hashing: queries touch thousands of days, and a SHA-256 per day would dominate them."""
    return TaskRng.from_state(city_seed ^ (day_number * 0xD1B54A32D192ED03))


@dataclass(frozen=True)
class _Climate:
    """A city's climate: yearly mean and seasonal swing (°C), warmest day of the year, two slow
    weather waves (phases, size in °C), chance of a wet day, rain per wet day (mm), PM2.5 level."""

    seed: int
    annual_mean: float
    amplitude: float
    peak_day: int
    wave_phases: tuple[float, float]
    wave_size: float
    wetness: float
    rain_scale: float
    pollution: float


@cache
def _climate(city: City) -> _Climate:
    rng = TaskRng("weather-climate", city.key)
    latitude = abs(city.latitude)
    annual = 28.0 - 0.5 * max(0.0, latitude - 12.0) - 6.5 * city.elevation / 1000.0
    return _Climate(
        seed=rng.next_u64(),
        annual_mean=annual + rng.uniform(-3.0, 3.0),
        amplitude=1.0 + 0.25 * latitude * rng.uniform(0.8, 1.2),
        peak_day=200 if city.latitude >= 0 else 20,
        wave_phases=(rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi)),
        wave_size=rng.uniform(1.5, 3.0),
        wetness=rng.uniform(0.12, 0.5),
        rain_scale=rng.uniform(2.0, 9.0),
        pollution=rng.uniform(4.0, 18.0) + 6.0 * math.log10(max(city.population, 1)),
    )


@bounded_cache(200_000)
def day_weather(city: City, day: date) -> DayWeather:
    """The simulated weather of ``city`` on ``day``: a seasonal cycle, slow random waves and
    day-to-day noise, all a pure function of the city and the date."""
    climate = _climate(city)
    n = day.toordinal()
    rng = _day_rng(climate.seed, n)
    day_of_year = n - date(day.year, 1, 1).toordinal() + 1
    season = math.cos(2 * math.pi * (day_of_year - climate.peak_day) / 365.25)
    phase1, phase2 = climate.wave_phases
    anomaly = climate.wave_size * (
        math.sin(2 * math.pi * n / 9.3 + phase1) + math.sin(2 * math.pi * n / 23.7 + phase2)
    )
    mean = climate.annual_mean + climate.amplitude * season + anomaly + rng.uniform(-1.5, 1.5)
    wet = rng.random() < climate.wetness
    spread = rng.uniform(3.0, 7.0) * (0.6 if wet else 1.0)
    low, high = round(mean - spread, 1), round(mean + spread, 1)
    precipitation = round(-climate.rain_scale * math.log(1.0 - rng.random()), 1) if wet else 0.0
    if mean <= 0.0:
        rain, snow = 0.0, round(precipitation * 0.7, 1)
    elif mean < 2.0:
        rain, snow = round(precipitation / 2, 1), round(precipitation * 0.35, 1)
    else:
        rain, snow = precipitation, 0.0
    washout = 0.6 if precipitation > 1.0 else 1.0
    pm25 = round(max(1.0, climate.pollution * washout * rng.uniform(0.6, 1.5)), 1)
    return DayWeather(
        t_max=high,
        t_min=low,
        t_mean=round(low + (high - low) * _DIURNAL_MEAN, 1),
        rain=rain,
        snow=snow,
        pm25=pm25,
    )


class _Column(NamedTuple):
    """One column of a weather query's result: its field, unit and the :class:`DayWeather` value
    it reads (for hourly queries, the method that gives the day's 24 values)."""

    field: str
    unit: str
    reads: str


_QUERIES = load_data("weather_tools")
_SERIES = {
    name: tuple(_Column(**column) for column in columns)
    for name, columns in _QUERIES["series"].items()
}
_READS = {column.field: column.reads for columns in _SERIES.values() for column in columns}


def _reading(city: City, day: date, field: str) -> float:
    """The value a daily query's ``field`` shows for ``city`` on ``day``."""
    value: float = getattr(day_weather(city, day), _READS[field])
    return value


def _daily(results: Results, field: str) -> list[Any]:
    """The daily ``field`` of the last result: a weather query's."""
    values: list[Any] = results[-1]["daily"][field]
    return values


def _days_with(results: Results, field: str) -> int:
    """On how many days of the last weather query ``field`` is above zero (rain, snow)."""
    return sum(value > 0 for value in _daily(results, field))


def _warmest_day(results: Results) -> str:
    """The day of the last weather query with the highest mean temperature."""
    means = _daily(results, "temperature_2m_mean")
    day: str = _daily(results, "time")[means.index(max(means))]
    return day


@dataclass(frozen=True)
class WeatherConfig(ToolConfig):
    """Difficulty knobs of :class:`WeatherEnv`."""


class WeatherEnv(CurrentDateTool, ToolEnv[WeatherConfig]):
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
    parameter_docs: ClassVar[Mapping[str, str]] = {
        name: spec["description"] for name, spec in _QUERIES["parameters"].items()
    }

    _home: City

    # ------------------------------------------------------------------ state
    def _setup(self, task: Task[WeatherConfig], rng: TaskRng) -> None:
        self._today = date(2021, 1, 1) + timedelta(days=rng.randbelow(4 * 365))
        self._home = rng.choice(_homes(task.split))

    def _state_key(self) -> str:
        return f"{self._today} {self._home.key}"

    def _progress_rate(self) -> float:
        """AgentGym's Weather server reports any progress above 0 as 1.0."""
        return 1.0 if self._subgoal_rate() > 0 else 0.0

    def _station(self, latitude: float, longitude: float) -> City:
        if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
            raise ToolError(
                f"({latitude}, {longitude}) are not coordinates: latitude must be in [-90, 90] "
                "and longitude in [-180, 180]"
            )
        exact = _by_coordinates().get((latitude, longitude))
        if exact is not None:
            return exact
        near = [c for c in cities() if abs(c.latitude - latitude) < 0.5]  # 0.5° is > 50 km
        best = min(
            near,
            key=lambda c: haversine_km(latitude, longitude, c.latitude, c.longitude),
            default=None,
        )
        if (
            best is None
            or haversine_km(latitude, longitude, best.latitude, best.longitude) > STATION_RADIUS_KM
        ):
            raise ToolError(
                f"no weather data within {STATION_RADIUS_KM:g} km of ({latitude}, {longitude}); "
                "look the coordinates up with get_latitude_longitude"
            )
        return best

    def _range(self, start_date: str, end_date: str, period: str) -> list[date]:
        start = parse_iso_date(start_date, "start_date")
        end = parse_iso_date(end_date, "end_date")
        if end < start:
            raise ToolError(f"end_date {end} is before start_date {start}")
        if (end - start).days >= MAX_RANGE_DAYS:
            raise ToolError(
                f"at most {MAX_RANGE_DAYS} days per query; got {(end - start).days + 1}"
            )
        if period == "historical":
            if end >= self._today:
                raise ToolError(
                    f"historical data ends yesterday ({self._today - timedelta(days=1)}); use the "
                    "current or forecast tools for later days"
                )
            if start < FIRST_DAY:
                raise ToolError(f"historical data starts on {FIRST_DAY}")
        else:
            last = self._today + timedelta(days=FORECAST_DAYS - 1)
            if start < self._today or end > last:
                raise ToolError(
                    f"forecasts cover {self._today} to {last}; use the historical tools for "
                    "earlier days"
                )
        return [start + timedelta(days=i) for i in range((end - start).days + 1)]

    def _days(self, period: str, dates: dict[str, str]) -> list[date]:
        """The days a query of ``period`` asks for, checked against what the service covers."""
        if period == "current":
            day = parse_iso_date(dates["current_date"], "current_date")
            if day != self._today:
                raise ToolError(
                    f"current data is only available for today; current_date {day} is not today"
                )
            return [day]
        if period == "hourly":
            day = parse_iso_date(dates["date"], "date")
            if not FIRST_DAY <= day < self._today + timedelta(days=FORECAST_DAYS):
                last = self._today + timedelta(days=FORECAST_DAYS - 1)
                raise ToolError(f"hourly data covers {FIRST_DAY} to {last}")
            return [day]
        return self._range(dates["start_date"], dates["end_date"], period)

    def _query(
        self, period: str, series: str, latitude: float, longitude: float, **dates: str
    ) -> dict[str, Any]:
        """A weather query (the tools of :attr:`queries`): the ``series`` of the place within
        50 km, daily over the days asked for, or hourly over one day."""
        days = self._days(period, dates)
        city = self._station(latitude, longitude)
        columns = _SERIES[series]
        units = {"time": "iso8601", **{column.field: column.unit for column in columns}}
        located = {"latitude": city.latitude, "longitude": city.longitude}
        if period == "hourly":
            weather = day_weather(city, days[0])
            hours = [f"{days[0].isoformat()}T{hour:02d}:00" for hour in range(24)]
            values = {column.field: list(getattr(weather, column.reads)()) for column in columns}
            return {**located, "hourly_units": units, "hourly": {"time": hours, **values}}
        weathers = [day_weather(city, d) for d in days]
        daily: dict[str, list[Any]] = {"time": [d.isoformat() for d in days]}
        for column in columns:
            daily[column.field] = [getattr(w, column.reads) for w in weathers]
        return {**located, "daily_units": units, "daily": daily}

    # ------------------------------------------------------------------ tools
    @tool
    def get_user_current_location(self) -> str:
        """Get the user's current city.

        Returns:
            The name of the city.
        """
        return self._home.name

    @tool
    def get_latitude_longitude(self, name: str) -> dict:
        """Get the latitude and longitude of a place by name.

        Args:
            name: The name of the place (e.g. a city name; 'Paris, France' narrows it down).

        Returns:
            Up to 3 matching places, most populous first, with latitude, longitude, country_code and
            country.
        """
        text, _, qualifier = name.partition(",")
        found = list(_names().get(normalize_answer(text), ()))
        if not found:
            wanted = normalize_answer(text)
            found = [c for c in cities() if wanted and normalize_answer(c.name).startswith(wanted)]
        if qualifier.strip():
            where = normalize_answer(qualifier)
            found = [
                c
                for c in found
                if where in (normalize_answer(c.country), normalize_answer(c.country_name))
            ]
        nothing = f"no place named {name.strip()[:60]!r} is known"
        return search_results(found[:3], _place, nothing)

    @tool
    def get_elevation(self, latitude: float, longitude: float) -> dict:
        """Get the elevation of a location.

        Returns:
            The elevation in metres.
        """
        city = self._station(latitude, longitude)
        return {"latitude": city.latitude, "longitude": city.longitude, "elevation": city.elevation}

    @tool
    def get_distance(
        self, latitude1: float, longitude1: float, latitude2: float, longitude2: float
    ) -> dict:
        """Calculate the distance between two coordinates.

        Args:
            latitude1: The latitude of the first location.
            longitude1: The longitude of the first location.
            latitude2: The latitude of the second location.
            longitude2: The longitude of the second location.

        Returns:
            The great-circle distance in kilometres.
        """
        for lat, lon in ((latitude1, longitude1), (latitude2, longitude2)):
            if not (-90 <= lat <= 90 and -180 <= lon <= 180):
                raise ToolError(f"({lat}, {lon}) are not coordinates")
        return {"distance": round(haversine_km(latitude1, longitude1, latitude2, longitude2), 2)}

    queries: ClassVar[ToolTable] = ToolTable.from_data(_QUERIES, method="_query")
    """The historical, forecast, current and hourly queries, declared in ``weather_tools.json``."""

    @tool
    def get_air_quality_level(self, air_quality_index: float) -> str:
        """Determine the air quality level of an air quality index (PM2.5).

        Args:
            air_quality_index: The air quality index (PM2.5, µg/m³).

        Returns:
            One of 'good', 'fair', 'moderate', 'poor', 'very poor', 'extremely poor'.
        """
        if air_quality_index < 0:
            raise ToolError("air_quality_index must not be negative")
        return air_quality_level(air_quality_index)

    # ------------------------------------------------------------------ goals
    def _pick(self, rng: TaskRng, split: str, count: int = 1) -> list[City]:
        return rng.sample(_split_cities(split), count)

    def _label(self, city: City) -> str:
        """The city as a goal names it; shared names get the country."""
        if _shares_name(city):
            return f"{city.name} ({city.country_name})"
        return city.name

    def _lookup(self, city: City) -> ToolCall:
        if _shares_name(city):
            return call("get_latitude_longitude", name=f"{city.name}, {city.country_name}")
        return call("get_latitude_longitude", name=city.name)

    def _weather_at(
        self, city: City, tool_name: str, *, start: date, end: date | None = None
    ) -> list[PlanStep]:
        """Look ``city`` up, then query it with ``tool_name`` (one of :attr:`queries`) for
        ``start`` (to ``end``)."""
        period = dict(self.tools[tool_name].presets)["period"]
        if period == "hourly":
            days = {"date": start.isoformat()}
        elif period == "current":
            days = {"current_date": start.isoformat()}
        else:
            days = {"start_date": start.isoformat(), "end_date": (end or start).isoformat()}
        query = call(tool_name, latitude=city.latitude, longitude=city.longitude, **days)
        return [self._lookup(city), query]

    def _measure(self, first: City, second: City) -> tuple[Answer, list[PlanStep]]:
        """The distance between two cities, and the plan that measures it."""
        distance = round(
            haversine_km(first.latitude, first.longitude, second.latitude, second.longitude), 2
        )
        measure = call(
            "get_distance",
            latitude1=first.latitude,
            longitude1=first.longitude,
            latitude2=second.latitude,
            longitude2=second.longitude,
        )
        return Answer(distance, "number"), [self._lookup(first), self._lookup(second), measure]

    def _past_day(self, rng: TaskRng, most: int = 900) -> date:
        return self._today - timedelta(days=rng.randint(2, most))

    @goal_template(level=1)
    def _goal_elevation(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        goal = rng.choice(
            [
                f"What is the elevation of {self._label(city)} in metres?",
                f"How high above sea level is {self._label(city)}, in metres?",
            ]
        )
        plan = [
            self._lookup(city),
            call("get_elevation", latitude=city.latitude, longitude=city.longitude),
        ]
        answer = Answer(city.elevation, "number")
        return Episode.question(goal, plan, answer, lambda seen: seen[-1]["elevation"])

    @goal_template(level=1, weight=2)
    def _goal_temperature_on_day(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        day = self._past_day(rng)
        stat, field = rng.choice(
            [
                ("highest", "temperature_2m_max"),
                ("lowest", "temperature_2m_min"),
                ("average", "temperature_2m_mean"),
            ]
        )
        goal = f"What was the {stat} temperature in {self._label(city)} on {day}, in °C?"
        plan = self._weather_at(city, "get_historical_temp", start=day)
        answer = Answer(_reading(city, day, field), "number")
        return Episode.question(goal, plan, answer, lambda seen: _daily(seen, field)[0])

    @goal_template(level=1)
    def _goal_rain_total(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        end = self._past_day(rng)
        start = end - timedelta(days=rng.randint(0, 13))
        days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
        total = round(sum(day_weather(city, d).rain for d in days), 1)
        if start == end:
            goal = f"How much rain fell in {self._label(city)} on {start}, in mm?"
        else:
            goal = (
                f"How much rain fell in {self._label(city)} in total from {start} to {end}, in mm?"
            )
        plan = self._weather_at(city, "get_historical_rain", start=start, end=end)
        answer = Answer(total, "number")
        return Episode.question(
            goal, plan, answer, lambda seen: round(sum(_daily(seen, "rain_sum")), 1)
        )

    @goal_template(level=1)
    def _goal_distance(self, rng: TaskRng, split: str) -> Episode:
        first, second = self._pick(rng, split, 2)
        goal = f"How far apart are {self._label(first)} and {self._label(second)}, in kilometres?"
        answer, plan = self._measure(first, second)
        return Episode.question(goal, plan, answer, lambda seen: seen[-1]["distance"])

    @goal_template(level=2)
    def _goal_yesterday(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        yesterday = self._today - timedelta(days=1)
        stat, field = rng.choice(
            [("highest", "temperature_2m_max"), ("lowest", "temperature_2m_min")]
        )
        goal = f"What was the {stat} temperature in {self._label(city)} yesterday, in °C?"
        plan = [self.date_call, *self._weather_at(city, "get_historical_temp", start=yesterday)]
        answer = Answer(_reading(city, yesterday, field), "number")
        return Episode.question(goal, plan, answer, lambda seen: _daily(seen, field)[0])

    @goal_template(level=2)
    def _goal_today(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        kind, tool_name, field, unit = rng.choice(
            [
                ("average temperature", "get_current_temp", "temperature_2m_mean", "°C"),
                ("rainfall", "get_current_rain", "rain_sum", "mm"),
            ]
        )
        goal = f"What is the {kind} in {self._label(city)} today, in {unit}?"
        plan = [self.date_call, *self._weather_at(city, tool_name, start=self._today)]
        answer = Answer(_reading(city, self._today, field), "number")
        return Episode.question(goal, plan, answer, lambda seen: _daily(seen, field)[0])

    @goal_template(level=2)
    def _goal_forecast_extreme(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        days = rng.randint(2, 7)
        highest = rng.random() < 0.5
        word = "highest" if highest else "lowest"
        goal = (
            f"What is the {word} temperature forecast for {self._label(city)} over the next "
            f"{days} days (tomorrow through {days} days from today), in °C?"
        )
        span = [self._today + timedelta(days=i) for i in range(1, days + 1)]
        weather = [day_weather(city, d) for d in span]
        value = max(w.t_max for w in weather) if highest else min(w.t_min for w in weather)
        plan = [
            self.date_call,
            *self._weather_at(city, "get_temp_forecast", start=span[0], end=span[-1]),
        ]

        def extreme(seen: Results) -> float:
            if highest:
                return max(_daily(seen, "temperature_2m_max"))
            return min(_daily(seen, "temperature_2m_min"))

        return Episode.question(goal, plan, Answer(value, "number"), extreme)

    @goal_template(level=2)
    def _goal_snow_tomorrow(self, rng: TaskRng, split: str) -> Episode | None:
        tomorrow = self._today + timedelta(days=1)
        if rng.random() < 0.5:
            snowy = [c for c in _cold_cities(split) if day_weather(c, tomorrow).snow > 0]
            if not snowy:
                return None
            city, snows = rng.choice(snowy), True
        else:
            city = rng.choice(_split_cities(split))
            snows = day_weather(city, tomorrow).snow > 0
        goal = f"Will it snow in {self._label(city)} tomorrow? Answer yes or no."
        plan = [self.date_call, *self._weather_at(city, "get_snow_forecast", start=tomorrow)]
        answer = Answer("yes" if snows else "no", "text")
        return Episode.question(
            goal, plan, answer, lambda seen: "yes" if _daily(seen, "snowfall_sum")[0] > 0 else "no"
        )

    @goal_template(level=2)
    def _goal_my_location(self, rng: TaskRng, split: str) -> Episode:
        day = self._past_day(rng, 400)
        goal = f"What was the average temperature where I am on {day}, in °C?"
        home = self._home
        plan = [
            call("get_user_current_location"),
            *self._weather_at(home, "get_historical_temp", start=day),
        ]
        answer = Answer(day_weather(home, day).t_mean, "number")
        return Episode.question(
            goal, plan, answer, lambda seen: _daily(seen, "temperature_2m_mean")[0]
        )

    @goal_template(level=2)
    def _goal_hourly(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        tomorrow = self._today + timedelta(days=1)
        hour = rng.randint(0, 23)
        goal = (
            f"What will the temperature be in {self._label(city)} at {hour:02d}:00 tomorrow, in °C?"
        )
        plan = [self.date_call, *self._weather_at(city, "get_hourly_temp", start=tomorrow)]
        answer = Answer(day_weather(city, tomorrow).hourly()[hour], "number")
        return Episode.question(
            goal, plan, answer, lambda seen: seen[-1]["hourly"]["temperature_2m"][hour]
        )

    @goal_template(level=2)
    def _goal_snow_days_in_month(self, rng: TaskRng, split: str) -> Episode | None:
        cold = _cold_cities(split)
        if not cold:
            return None
        city = rng.choice(cold)
        first = date(self._today.year - 1, 1, 1)
        month = rng.choice([1, 2, 3, 11, 12] if city.latitude > 0 else [6, 7, 8])
        start = first.replace(month=month)
        end = (start.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
        count = sum(day_weather(city, d).snow > 0 for d in days)
        goal = (
            f"On how many days of {_MONTHS[month - 1]} {start.year} did it snow in "
            f"{self._label(city)}?"
        )
        plan = self._weather_at(city, "get_historical_snow", start=start, end=end)
        return Episode.question(
            goal, plan, Answer(count, "number"), lambda seen: _days_with(seen, "snowfall_sum")
        )

    @goal_template(level=2)
    def _goal_mean_air_quality(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        end = self._past_day(rng, 300)
        start = end - timedelta(days=rng.randint(2, 6))
        days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
        mean = round(sum(day_weather(city, d).pm25 for d in days) / len(days), 2)
        goal = (
            f"What was the average daily PM2.5 air quality index in {self._label(city)} from "
            f"{start} to {end}?"
        )
        plan = self._weather_at(city, "get_historical_air_quality_index", start=start, end=end)

        def average(seen: Results) -> float:
            values = _daily(seen, "pm2_5")
            return round(sum(values) / len(values), 2)

        return Episode.question(goal, plan, Answer(mean, "number"), average)

    @goal_template(level=3)
    def _goal_air_quality_level(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        index = day_weather(city, self._today).pm25
        goal = f"What is the air quality level in {self._label(city)} today?"
        plan = [
            self.date_call,
            *self._weather_at(city, "get_current_air_quality_index", start=self._today),
            DerivedCall(
                "get_air_quality_level",
                lambda seen: {"air_quality_index": _daily(seen, "pm2_5")[0]},
            ),
        ]
        answer = Answer(air_quality_level(index), "text")
        return Episode.question(goal, plan, answer, lambda seen: seen[-1])

    @goal_template(level=3)
    def _goal_warmer_today(self, rng: TaskRng, split: str) -> Episode | None:
        first, second = self._pick(rng, split, 2)
        if first.name == second.name:
            return None
        a, b = (day_weather(c, self._today).t_mean for c in (first, second))
        if abs(a - b) < 0.5:
            return None
        goal = (
            f"Which is warmer today on average, {self._label(first)} or {self._label(second)}? "
            "Answer with the city's name."
        )
        lookups, queries = zip(
            *(self._weather_at(c, "get_current_temp", start=self._today) for c in (first, second)),
            strict=True,
        )
        plan = [self.date_call, *lookups, *queries]  # 0: date, 1-2: coordinates, 3-4: temperatures

        def warmer(seen: Results) -> str:
            means = [seen[i]["daily"]["temperature_2m_mean"][0] for i in (3, 4)]
            name: str = seen[1 if means[0] > means[1] else 2]["results"][0]["name"]
            return name

        answer = Answer((first if a > b else second).name, "text")
        return Episode.question(goal, plan, answer, warmer)

    @goal_template(level=3)
    def _goal_warmest_last_week(self, rng: TaskRng, split: str) -> Episode | None:
        (city,) = self._pick(rng, split)
        span = [self._today - timedelta(days=i) for i in range(7, 0, -1)]
        means = [day_weather(city, d).t_mean for d in span]
        if means.count(max(means)) > 1:
            return None
        goal = (
            f"During the last 7 days (not counting today), on which day was the average "
            f"temperature in {self._label(city)} highest? Answer with the date (YYYY-MM-DD)."
        )
        plan = [
            self.date_call,
            *self._weather_at(city, "get_historical_temp", start=span[0], end=span[-1]),
        ]
        warmest = span[means.index(max(means))].isoformat()
        return Episode.question(goal, plan, Answer(warmest, "date"), _warmest_day)

    @goal_template(level=3)
    def _goal_rainy_days_ahead(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        days = rng.choice([5, 7, 10])
        span = [self._today + timedelta(days=i) for i in range(1, days + 1)]
        count = sum(day_weather(city, d).rain > 0 for d in span)
        goal = (
            f"On how many of the next {days} days (tomorrow onwards) is rain forecast in "
            f"{self._label(city)}?"
        )
        plan = [
            self.date_call,
            *self._weather_at(city, "get_rain_forecast", start=span[0], end=span[-1]),
        ]
        return Episode.question(
            goal, plan, Answer(count, "number"), lambda seen: _days_with(seen, "rain_sum")
        )

    @goal_template(level=3)
    def _goal_distance_from_me(self, rng: TaskRng, split: str) -> Episode | None:
        (city,) = self._pick(rng, split)
        home = self._home
        if city == home:
            return None
        goal = f"How far is {self._label(city)} from where I am, in kilometres?"
        answer, measure = self._measure(home, city)
        plan = [call("get_user_current_location"), *measure]
        return Episode.question(goal, plan, answer, lambda seen: seen[-1]["distance"])

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        if param == "name":
            return [c.name for c in cities()[:60]]
        if param == "date":
            return [(self._today + timedelta(days=i)).isoformat() for i in range(-6, 7)]
        if param == "air_quality_index":
            return [5.0, 12.5, 22.0, 30.0, 60.0, 80.0]
        return None

    def _sample_arguments(self, selected: Tool, rng: np.random.Generator) -> dict[str, Any]:
        arguments = super()._sample_arguments(selected, rng)
        for suffix in ("", "1", "2"):  # coordinates of a real city, so that the call is valid
            if f"latitude{suffix}" in arguments:
                city = cities()[int(rng.integers(len(cities())))]
                arguments[f"latitude{suffix}"] = city.latitude
                arguments[f"longitude{suffix}"] = city.longitude
        if "current_date" in arguments:
            arguments["current_date"] = self._today.isoformat()
        if "start_date" in arguments:  # a valid range for the tool's kind of data
            first = int(rng.integers(1, 15))
            length = int(rng.integers(0, 7))
            if "forecast" in selected.name:
                start = self._today + timedelta(days=first - 1)
                end = min(start + timedelta(days=length), self._today + timedelta(days=15))
            else:
                end = self._today - timedelta(days=first)
                start = end - timedelta(days=length)
            arguments["start_date"], arguments["end_date"] = start.isoformat(), end.isoformat()
        return arguments
