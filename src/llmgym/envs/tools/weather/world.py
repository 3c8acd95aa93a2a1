"""The simulated world of the weather service: its cities and their weather, a pure function
of each city's latitude, elevation and the date (a seasonal cycle, slow weather waves and
day-to-day noise), and the weather station that answers for a pair of coordinates."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import NamedTuple

from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import ItemSplit, load_data, normalize_answer
from llmgym.errors import ToolError

__all__ = [
    "FIRST_DAY",
    "FORECAST_DAYS",
    "MAX_RANGE_DAYS",
    "STATION_RADIUS_KM",
    "City",
    "DayWeather",
    "air_quality_level",
    "cities",
    "cities_named",
    "cold_cities",
    "day_weather",
    "haversine_km",
    "homes",
    "shares_name",
    "split_cities",
    "station",
]

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
def cities_named() -> dict[str, tuple[City, ...]]:
    """The cities by normalised name (a few names belong to several places)."""
    index: dict[str, list[City]] = {}
    for city in cities():
        index.setdefault(normalize_answer(city.name), []).append(city)
    return {name: tuple(found) for name, found in index.items()}


split_cities = ItemSplit("weather", cities, lambda city: city.key)
"""The cities of each split: goals of one split only ask about its cities."""


@cache
def _by_coordinates() -> dict[tuple[float, float], City]:
    return {(c.latitude, c.longitude): c for c in cities()}


def shares_name(city: City) -> bool:
    """Whether another city has the same name (goals then name the country too)."""
    return len(cities_named()[normalize_answer(city.name)]) > 1


@cache
def homes(split: str) -> tuple[City, ...]:
    """Cities of ``split`` that can be the user's location (their name is unambiguous)."""
    return tuple(c for c in split_cities(split) if not shares_name(c))


@cache
def cold_cities(split: str) -> tuple[City, ...]:
    """Cities of ``split`` whose winter mean is near or below freezing."""
    return tuple(
        c for c in split_cities(split) if _climate(c).annual_mean - _climate(c).amplitude < 2
    )


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


def station(latitude: float, longitude: float) -> City:
    """The city whose weather station answers for ``(latitude, longitude)``: the nearest one
    within :data:`STATION_RADIUS_KM`; :class:`ToolError` for other coordinates."""
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
