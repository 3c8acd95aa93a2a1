"""Wordle rules: feedback with repeated letters, invalid guesses, hard mode, word lists."""

from __future__ import annotations

import gymnasium as gym
import pytest

from llmgym.envs.wordle import GREEN, GREY, YELLOW, WordleEnv, score_guess, word_lists

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
