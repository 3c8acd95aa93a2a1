"""The weather service's tools: the user's context, places (coordinates, elevation, distance)
and the weather queries (historical, forecast, current and hourly series, air quality), over the
episode's :class:`WeatherState`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, ClassVar, NamedTuple

from llmgym.envs.tools import (
    Toolkit,
    ToolTable,
    load_data,
    normalize_answer,
    parse_iso_date,
    search_results,
    tool,
)
from llmgym.envs.tools.weather.world import (
    FIRST_DAY,
    FORECAST_DAYS,
    MAX_RANGE_DAYS,
    City,
    air_quality_level,
    cities,
    cities_named,
    day_weather,
    haversine_km,
    station,
)
from llmgym.errors import ToolError

__all__ = ["Places", "WeatherQueries", "WeatherState", "reading"]


@dataclass
class WeatherState:
    """The user's current date and location (a city whose name is unambiguous)."""

    today: date
    home: City


class _Column(NamedTuple):
    """One column of a weather query's result: its field, unit and the :class:`DayWeather` value
    it reads (for hourly queries, the method that gives the day's 24 values)."""

    field: str
    unit: str
    reads: str


QUERIES = load_data("weather_tools")
"""The weather queries' tools, parameters and series (``weather_tools.json``)."""
_SERIES = {
    name: tuple(_Column(**column) for column in columns)
    for name, columns in QUERIES["series"].items()
}
_READS = {column.field: column.reads for columns in _SERIES.values() for column in columns}


def reading(city: City, day: date, field: str) -> float:
    """The value a daily query's ``field`` shows for ``city`` on ``day``."""
    value: float = getattr(day_weather(city, day), _READS[field])
    return value


def _place(city: City) -> dict[str, Any]:
    """A city as the location lookup shows it."""
    return {
        "name": city.name,
        "latitude": city.latitude,
        "longitude": city.longitude,
        "country_code": city.country,
        "country": city.country_name,
    }


class Places(Toolkit[WeatherState]):
    """Where the user is, and the coordinates, elevation and distances of places."""

    parameter_docs: ClassVar[Mapping[str, str]] = {
        name: spec["description"] for name, spec in QUERIES["parameters"].items()
    }

    @tool
    def get_user_current_location(self) -> str:
        """Get the user's current city.

        Returns:
            The name of the city.
        """
        return self.state.home.name

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
        found = list(cities_named().get(normalize_answer(text), ()))
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
        city = station(latitude, longitude)
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


class WeatherQueries(Toolkit[WeatherState]):
    """The weather of the place within 50 km of a pair of coordinates, over the days the
    service covers (from 2000-01-01 to a 16-day forecast), and air-quality levels."""

    queries: ClassVar[ToolTable] = ToolTable.from_data(QUERIES, method="_query")
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

    def _range(self, start_date: str, end_date: str, period: str) -> list[date]:
        today = self.state.today
        start = parse_iso_date(start_date, "start_date")
        end = parse_iso_date(end_date, "end_date")
        if end < start:
            raise ToolError(f"end_date {end} is before start_date {start}")
        if (end - start).days >= MAX_RANGE_DAYS:
            raise ToolError(
                f"at most {MAX_RANGE_DAYS} days per query; got {(end - start).days + 1}"
            )
        if period == "historical":
            if end >= today:
                raise ToolError(
                    f"historical data ends yesterday ({today - timedelta(days=1)}); use the "
                    "current or forecast tools for later days"
                )
            if start < FIRST_DAY:
                raise ToolError(f"historical data starts on {FIRST_DAY}")
        else:
            last = today + timedelta(days=FORECAST_DAYS - 1)
            if start < today or end > last:
                raise ToolError(
                    f"forecasts cover {today} to {last}; use the historical tools for earlier days"
                )
        return [start + timedelta(days=i) for i in range((end - start).days + 1)]

    def _days(self, period: str, dates: dict[str, str]) -> list[date]:
        """The days a query of ``period`` asks for, checked against what the service covers."""
        if period == "current":
            day = parse_iso_date(dates["current_date"], "current_date")
            if day != self.state.today:
                raise ToolError(
                    f"current data is only available for today; current_date {day} is not today"
                )
            return [day]
        if period == "hourly":
            day = parse_iso_date(dates["date"], "date")
            if not FIRST_DAY <= day < self.state.today + timedelta(days=FORECAST_DAYS):
                last = self.state.today + timedelta(days=FORECAST_DAYS - 1)
                raise ToolError(f"hourly data covers {FIRST_DAY} to {last}")
            return [day]
        return self._range(dates["start_date"], dates["end_date"], period)

    def _query(
        self, period: str, series: str, latitude: float, longitude: float, **dates: str
    ) -> dict[str, Any]:
        """A weather query (the tools of :attr:`queries`): the ``series`` of the place within
        50 km, daily over the days asked for, or hourly over one day."""
        days = self._days(period, dates)
        city = station(latitude, longitude)
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
