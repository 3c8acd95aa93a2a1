"""The weather service's goals: 17 templates, from single lookups to multi-step comparisons,
about the cities of the task's split, relative to the user's date and location."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import (
    Answer,
    CurrentDate,
    DerivedCall,
    Episode,
    Goals,
    PlanStep,
    Results,
    ToolCall,
    call,
    goal_template,
)
from llmgym.envs.tools.weather.toolkit import WeatherQueries, WeatherState, reading
from llmgym.envs.tools.weather.world import (
    City,
    air_quality_level,
    cold_cities,
    day_weather,
    haversine_km,
    shares_name,
    split_cities,
)

__all__ = ["WeatherGoals"]

_DATE = CurrentDate.date_call
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


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


class WeatherGoals(Goals[WeatherState]):
    """Questions about the weather, places and distances."""

    @property
    def today(self) -> date:
        """The user's current date."""
        return self.state.today

    def _pick(self, rng: TaskRng, split: str, count: int = 1) -> list[City]:
        return rng.sample(split_cities(split), count)

    def _label(self, city: City) -> str:
        """The city as a goal names it; shared names get the country."""
        if shares_name(city):
            return f"{city.name} ({city.country_name})"
        return city.name

    def _lookup(self, city: City) -> ToolCall:
        if shares_name(city):
            return call("get_latitude_longitude", name=f"{city.name}, {city.country_name}")
        return call("get_latitude_longitude", name=city.name)

    def _weather_at(
        self, city: City, tool_name: str, *, start: date, end: date | None = None
    ) -> list[PlanStep]:
        """Look ``city`` up, then query it with ``tool_name`` (one of
        :attr:`WeatherQueries.queries`) for ``start`` (to ``end``)."""
        period = dict(WeatherQueries.tools[tool_name].presets)["period"]
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
        return self.today - timedelta(days=rng.randint(2, most))

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
        answer = Answer(reading(city, day, field), "number")
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
        yesterday = self.today - timedelta(days=1)
        stat, field = rng.choice(
            [("highest", "temperature_2m_max"), ("lowest", "temperature_2m_min")]
        )
        goal = f"What was the {stat} temperature in {self._label(city)} yesterday, in °C?"
        plan = [_DATE, *self._weather_at(city, "get_historical_temp", start=yesterday)]
        answer = Answer(reading(city, yesterday, field), "number")
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
        plan = [_DATE, *self._weather_at(city, tool_name, start=self.today)]
        answer = Answer(reading(city, self.today, field), "number")
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
        span = [self.today + timedelta(days=i) for i in range(1, days + 1)]
        weather = [day_weather(city, d) for d in span]
        value = max(w.t_max for w in weather) if highest else min(w.t_min for w in weather)
        plan = [
            _DATE,
            *self._weather_at(city, "get_temp_forecast", start=span[0], end=span[-1]),
        ]

        def extreme(seen: Results) -> float:
            if highest:
                return max(_daily(seen, "temperature_2m_max"))
            return min(_daily(seen, "temperature_2m_min"))

        return Episode.question(goal, plan, Answer(value, "number"), extreme)

    @goal_template(level=2)
    def _goal_snow_tomorrow(self, rng: TaskRng, split: str) -> Episode | None:
        tomorrow = self.today + timedelta(days=1)
        if rng.random() < 0.5:
            snowy = [c for c in cold_cities(split) if day_weather(c, tomorrow).snow > 0]
            if not snowy:
                return None
            city, snows = rng.choice(snowy), True
        else:
            city = rng.choice(split_cities(split))
            snows = day_weather(city, tomorrow).snow > 0
        goal = f"Will it snow in {self._label(city)} tomorrow? Answer yes or no."
        plan = [_DATE, *self._weather_at(city, "get_snow_forecast", start=tomorrow)]
        answer = Answer("yes" if snows else "no", "text")
        return Episode.question(
            goal, plan, answer, lambda seen: "yes" if _daily(seen, "snowfall_sum")[0] > 0 else "no"
        )

    @goal_template(level=2)
    def _goal_my_location(self, rng: TaskRng, split: str) -> Episode:
        day = self._past_day(rng, 400)
        goal = f"What was the average temperature where I am on {day}, in °C?"
        home = self.state.home
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
        tomorrow = self.today + timedelta(days=1)
        hour = rng.randint(0, 23)
        goal = (
            f"What will the temperature be in {self._label(city)} at {hour:02d}:00 tomorrow, in °C?"
        )
        plan = [_DATE, *self._weather_at(city, "get_hourly_temp", start=tomorrow)]
        answer = Answer(day_weather(city, tomorrow).hourly()[hour], "number")
        return Episode.question(
            goal, plan, answer, lambda seen: seen[-1]["hourly"]["temperature_2m"][hour]
        )

    @goal_template(level=2)
    def _goal_snow_days_in_month(self, rng: TaskRng, split: str) -> Episode | None:
        cold = cold_cities(split)
        if not cold:
            return None
        city = rng.choice(cold)
        first = date(self.today.year - 1, 1, 1)
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
        index = day_weather(city, self.today).pm25
        goal = f"What is the air quality level in {self._label(city)} today?"
        plan = [
            _DATE,
            *self._weather_at(city, "get_current_air_quality_index", start=self.today),
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
        a, b = (day_weather(c, self.today).t_mean for c in (first, second))
        if abs(a - b) < 0.5:
            return None
        goal = (
            f"Which is warmer today on average, {self._label(first)} or {self._label(second)}? "
            "Answer with the city's name."
        )
        lookups, queries = zip(
            *(self._weather_at(c, "get_current_temp", start=self.today) for c in (first, second)),
            strict=True,
        )
        plan = [_DATE, *lookups, *queries]  # 0: date, 1-2: coordinates, 3-4: temperatures

        def warmer(seen: Results) -> str:
            means = [seen[i]["daily"]["temperature_2m_mean"][0] for i in (3, 4)]
            name: str = seen[1 if means[0] > means[1] else 2]["results"][0]["name"]
            return name

        answer = Answer((first if a > b else second).name, "text")
        return Episode.question(goal, plan, answer, warmer)

    @goal_template(level=3)
    def _goal_warmest_last_week(self, rng: TaskRng, split: str) -> Episode | None:
        (city,) = self._pick(rng, split)
        span = [self.today - timedelta(days=i) for i in range(7, 0, -1)]
        means = [day_weather(city, d).t_mean for d in span]
        if means.count(max(means)) > 1:
            return None
        goal = (
            f"During the last 7 days (not counting today), on which day was the average "
            f"temperature in {self._label(city)} highest? Answer with the date (YYYY-MM-DD)."
        )
        plan = [
            _DATE,
            *self._weather_at(city, "get_historical_temp", start=span[0], end=span[-1]),
        ]
        warmest = span[means.index(max(means))].isoformat()
        return Episode.question(goal, plan, Answer(warmest, "date"), _warmest_day)

    @goal_template(level=3)
    def _goal_rainy_days_ahead(self, rng: TaskRng, split: str) -> Episode:
        (city,) = self._pick(rng, split)
        days = rng.choice([5, 7, 10])
        span = [self.today + timedelta(days=i) for i in range(1, days + 1)]
        count = sum(day_weather(city, d).rain > 0 for d in span)
        goal = (
            f"On how many of the next {days} days (tomorrow onwards) is rain forecast in "
            f"{self._label(city)}?"
        )
        plan = [
            _DATE,
            *self._weather_at(city, "get_rain_forecast", start=span[0], end=span[-1]),
        ]
        return Episode.question(
            goal, plan, Answer(count, "number"), lambda seen: _days_with(seen, "rain_sum")
        )

    @goal_template(level=3)
    def _goal_distance_from_me(self, rng: TaskRng, split: str) -> Episode | None:
        (city,) = self._pick(rng, split)
        home = self.state.home
        if city == home:
            return None
        goal = f"How far is {self._label(city)} from where I am, in kilometres?"
        answer, measure = self._measure(home, city)
        plan = [call("get_user_current_location"), *measure]
        return Episode.question(goal, plan, answer, lambda seen: seen[-1]["distance"])
