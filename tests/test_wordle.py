"""Wordle rules: feedback with repeated letters, invalid guesses, hard mode, word lists."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest

from llmgym.envs.wordle import (
    GREEN,
    GREY,
    YELLOW,
    WordleEnv,
    _answers_for,
    score_guess,
    word_lists,
)
from llmgym.testing import check_conformance

G, Y, B = GREEN, YELLOW, GREY


@pytest.mark.parametrize(
    ("guess", "answer", "expected"),
    [
        ("crane", "crane", (G, G, G, G, G)),
        ("slate", "crane", (B, B, G, B, G)),
        # one 'e' in the answer: only one of the guess's two e's may be marked
        ("speed", "crane", (B, B, Y, B, B)),
        ("geese", "those", (B, B, B, G, G)),
        ("eerie", "crane", (B, B, Y, B, G)),
        # the green e uses up the answer's only e, so the first e is grey
        ("eagle", "crane", (B, Y, B, B, G)),
        ("label", "ladle", (G, G, B, Y, Y)),
        ("allee", "eagle", (Y, Y, B, Y, G)),
        ("mamma", "maxim", (G, G, Y, B, B)),
    ],
)
def test_score_guess_handles_repeated_letters(guess, answer, expected) -> None:
    assert score_guess(guess, answer) == expected


def _env(**config) -> WordleEnv:
    env = gym.make("llmgym/Wordle-v0", **config).unwrapped
    env.reset(seed=0)
    return env


def test_invalid_words_do_not_count() -> None:
    env = _env()
    env._answer = "crane"
    for bad in ("xyzzy", "cranes", "cr4ne", "", "c-r-a-n-e", "ålçbé"):
        observation, reward, terminated, _, info = env.step(bad)
        assert info["invalid_action"] and not terminated and "does not count" in observation
    assert env._board == []
    observation, *_ = env.step("slate")
    assert "5 guesses left" in observation


@pytest.mark.parametrize(
    "form", ["crane", "CRANE", "c r a n e", "guess: crane", "Guess crane", "**crane**"]
)
def test_guess_forms_are_accepted(form: str) -> None:
    env = _env()
    env._answer = "crane"
    _, reward, terminated, _, info = env.step(form)
    assert not info["invalid_action"] and reward == 1.0 and terminated and info["success"]


def test_the_word_guess_is_a_valid_guess() -> None:
    env = _env()
    env._answer = "crane"
    assert not env.step("guess")[4]["invalid_action"]


def test_running_out_of_guesses_reveals_the_answer() -> None:
    env = _env(max_guesses=2)
    env._answer = "crane"
    env.step("slate")
    observation, reward, terminated, _, info = env.step("plumb")
    assert (
        terminated and reward == 0.0 and not info["success"] and "The word was crane" in observation
    )


def test_hard_mode_enforces_hints() -> None:
    env = _env(hard_mode=True)
    env._answer = "crane"
    env.step("slate")  # a green, e green
    observation, *_, info = env.step("plumb")
    assert info["invalid_action"] and "letter 3 must be 'a'" in observation
    assert not env.step("grace")[4]["invalid_action"]


@pytest.mark.parametrize("length", [4, 5, 6])
def test_word_lists(length: int) -> None:
    lists = word_lists(length)
    assert set(lists.answers) <= lists.guesses
    assert all(
        len(w) == length and w.isascii() and w.isalpha() and w.islower() for w in lists.guesses
    )
    if length == 5:
        assert len(lists.guesses) >= 2000 and len(lists.answers) >= 1000


def test_word_length_config_changes_tasks() -> None:
    env = _env(word_length=6)
    assert len(env._answer) == 6
    observation, *_, info = env.step("crane")
    assert info["invalid_action"] and "'crane' has 5 letters; the word has 6" in observation


# ---------------------------------------------------------------- AgentGym variant


def test_agentgym_feedback_is_one_letter_line_per_guess() -> None:
    env = _env(feedback="agentgym")
    env._answer = "crane"
    observation, reward, terminated, _, info = env.step("slate")
    assert observation == "b b g b g\n" and reward == 0.0 and not terminated
    assert env.step("xyzzy")[0] == "invalid word"
    assert env.step("xyzzy")[4]["invalid_action"]
    observation, reward, terminated, _, info = env.step("c r a n e")
    assert observation == "g g g g g\n" and reward == 1.0 and terminated and info["success"]


def test_agentgym_feedback_ends_after_the_last_guess() -> None:
    env = _env(feedback="agentgym", max_guesses=2)
    env._answer = "crane"
    assert not env.step("slate")[2]
    observation, reward, terminated, _, info = env.step("plumb")
    assert observation == "b b b b b\n" and terminated and reward == 0.0 and not info["success"]


def test_default_feedback_is_unchanged_and_has_no_candidates() -> None:
    env = _env()
    assert env.candidate_words() == []
    assert "one of" not in env.step("zzzzz")[0]
    env._answer = "crane"
    assert env.step("slate")[0].startswith("1. slate -> s grey")


def test_one_candidate_list_holds_every_answer_and_needs_no_reset() -> None:
    env = gym.make("llmgym/Wordle-v0", candidates=40).unwrapped
    words = env.candidate_words()
    assert len(words) == len(set(words)) == 40 and words == sorted(words)
    answers = {}
    for split in ("train", "eval"):
        for task_id in env.task_ids(split)[:60]:
            observation, _ = env.reset(options={"task_id": task_id})
            assert env.candidate_words() == words and " ".join(words) in observation
            assert env._answer in words and env._answer in _answers_for(5, split)
            answers.setdefault(split, set()).add(env._answer)
    assert not answers["train"] & answers["eval"]
    assert len(answers["train"]) > 10 and len(answers["eval"]) > 10
    env.reset(options={"task_id": "eval/00007"})
    first = env._answer
    env.reset(options={"task_id": "eval/00007"})
    assert env._answer == first


def test_only_candidate_words_are_accepted() -> None:
    env = gym.make("llmgym/Wordle-v0", candidates=10).unwrapped
    env.reset(options={"task_id": "eval/00001"})
    outsider = next(w for w in ("crane", "slate", "plumb") if w not in env.candidate_words())
    observation, _, _, _, info = env.step(outsider)
    assert info["invalid_action"] and "not one of the candidate words" in observation
    assert not env.step(env.candidate_words()[0])[4]["invalid_action"]


@pytest.mark.parametrize("length", [4, 6])
def test_the_largest_candidate_list_fits_every_word_length(length: int) -> None:
    env = gym.make("llmgym/Wordle-v0", word_length=length, candidates=200).unwrapped
    env.reset(options={"task_id": "eval/00000"})
    assert len(env.candidate_words()) == 200 and env._answer in env.candidate_words()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"candidates": 1}, "WordleConfig.candidates: 1 is not allowed"),
        ({"candidates": 201}, "WordleConfig.candidates"),
        ({"feedback": "letters"}, "one of 'verbose', 'agentgym'"),
    ],
)
def test_variant_options_are_validated(config, message) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make("llmgym/Wordle-v0", **config)


def test_agentgym_variant_conforms() -> None:
    make = functools.partial(gym.make, "llmgym/Wordle-v0", feedback="agentgym", candidates=40)
    figures = check_conformance(make, oracle_episodes=30, hostile_count=200)
    assert figures["oracle_success_rate"] >= 0.95
