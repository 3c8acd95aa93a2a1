"""Movie: the generated film database, its search and the results of its tools."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from llmgym.envs.tools import ToolCall
from llmgym.envs.tools.movie import MovieEnv, movie_database
from llmgym.envs.tools.movie.database import split_movies, split_people


@pytest.fixture
def env() -> MovieEnv:
    env = gym.make("llmgym/Movie-v0").unwrapped
    env.reset(seed=0)
    return env


def act(env: MovieEnv, tool_name: str, /, **arguments) -> tuple[object, bool]:
    observation, _, _, _, info = env.step(json.dumps({"name": tool_name, "arguments": arguments}))
    try:
        return json.loads(observation), info["invalid_action"]
    except json.JSONDecodeError:
        return observation, info["invalid_action"]


def test_database_is_consistent() -> None:
    db = movie_database()
    assert len(db.movies) == 1200 and len(db.people) > 2000
    titles = [m.title.lower() for m in db.movies.values()]
    names = [p.name.lower() for p in db.people.values()]
    assert len(set(titles)) == len(titles) and len(set(names)) == len(names)
    for movie in db.movies.values():
        assert len(movie.people("Director")) == 1
        assert 4 <= len(movie.cast) <= 10
        assert len({character for _, character in movie.cast}) == len(movie.cast)
        assert movie.budget > 0 and 1 <= len(movie.genres) <= 3
        for person, character in movie.cast:
            assert (movie, character) in person.cast
        for person, job in movie.crew:
            assert (movie, job) in person.crew
    for person in db.people.values():
        assert person.birthday < min(
            (m.release_date for m, _ in person.cast + person.crew), default="9999"
        )
        assert person.imdb_id.startswith("nm")


def test_database_is_pinned() -> None:
    """The database comes from llmgym's portable generator: the same on every machine."""
    db = movie_database()
    first = db.movies[min(db.movies)]
    assert (first.id, first.title, first.release_date, first.budget) == (
        "m20004",
        "The Sailor's Monsoon",
        "1989-04-14",
        152_700_000,
    )
    assert first.people("Director")[0].name == "Adaeze Navarro"


def test_search_ranks_exact_titles_first(env: MovieEnv) -> None:
    movie = split_movies("train")[3]
    result, invalid = act(env, "get_search_movie", movie_name=movie.title.upper())
    assert not invalid and result["results"][0]["id"] == movie.id
    assert len(result["results"]) <= 5
    word = max(movie.title.split(), key=len)
    result, _ = act(env, "get_search_movie", movie_name=word)
    assert all(word.lower() in r["title"].lower() for r in result["results"])
    result, invalid = act(env, "get_search_movie", movie_name="zzzz qqqq")
    assert invalid and "no movie matches" in result
    person = split_people("train")[5]
    result, _ = act(env, "get_search_person", person_name=person.name)
    assert result["results"][0] == {
        "id": person.id,
        "name": person.name,
        "known_for_department": person.department,
    }


def test_movie_tools_return_the_database_facts(env: MovieEnv) -> None:
    movie = split_movies("train")[10]
    details, _ = act(env, "get_movie_details", movie_id=movie.id)
    assert details["budget"] == movie.budget and details["release_date"] == movie.release_date
    assert details["genres"] == list(movie.genres)
    crew, _ = act(env, "get_movie_crew", movie_id=movie.id)
    directors = [c["name"] for c in crew["crew"] if c["job"] == "Director"]
    assert directors == [movie.people("Director")[0].name]
    cast, _ = act(env, "get_movie_cast", movie_id=movie.id)
    assert [c["order"] for c in cast["cast"]] == list(range(len(movie.cast)))
    countries, _ = act(env, "get_movie_production_countries", movie_id=movie.id)
    assert [c["iso_3166_1"] for c in countries["production_countries"]] == list(movie.countries)
    result, invalid = act(env, "get_movie_details", movie_id="934433")
    assert invalid and "ids look like 'm20417'" in result
    result, invalid = act(env, "get_movie_details", movie_id=934433)
    assert invalid and "argument 'movie_id' must be a string, got integer 934433" in result


def test_person_credits_are_complete_and_newest_first(env: MovieEnv) -> None:
    person = max(movie_database().people.values(), key=lambda p: len(p.cast))
    result, _ = act(env, "get_person_cast", person_id=person.id)
    dates = [r["release_date"] for r in result["cast"]]
    assert len(dates) == len(person.cast) > 10
    assert dates == sorted(dates, reverse=True)
    ids, _ = act(env, "get_person_external_ids", person_id=person.id)
    assert ids["imdb_id"] == person.imdb_id


def test_list_answers_ignore_order() -> None:
    env = gym.make("llmgym/Movie-v0", min_level=1, max_level=1).unwrapped
    for index in range(40):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        answer = env._episode.answer
        if answer.kind == "list" and len(answer.value) > 1:
            reversed_answer = json.dumps({"answer": list(reversed(answer.value))})
            _, reward, terminated, _, info = env.step(
                f"Action: finish with Action Input: {reversed_answer}"
            )
            assert terminated and reward == 1.0 and info["success"]
            return
    pytest.fail("no multi-item list goal among 40 level-1 tasks")


def test_eval_goals_are_about_eval_films_and_people() -> None:
    env = gym.make("llmgym/Movie-v0").unwrapped
    train_titles = {m.title for m in split_movies("train")}
    train_names = {p.name for p in split_people("train")}
    for index in range(60):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        subjects = [
            c.arguments.get("movie_name") or c.arguments.get("person_name")
            for c in env._episode.plan
            if isinstance(c, ToolCall)
        ]
        for subject in filter(None, subjects):
            assert subject not in train_titles and subject not in train_names
