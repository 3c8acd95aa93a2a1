"""Wordle: find the hidden word from per-letter green/yellow/grey feedback."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from llmgym.core import (
    EnvConfig,
    Task,
    TaskIdRange,
    TaskRng,
    TextEnv,
    Transition,
    knob,
    normalize_command,
    split_of,
)
from llmgym.core.cache import bounded_cache
from llmgym.errors import ConfigError

__all__ = ["WordleConfig", "WordleEnv", "score_guess", "word_lists"]

GREEN, YELLOW, GREY = "green", "yellow", "grey"
_PREFIX = re.compile(r"^(?:my )?(?:guess|answer|word)(?:\s*:\s*|\s+)(\S.*)$")
_SPLIT_AT = 120  # the oracle plans by partitions once at most this many candidates remain
_LETTER = {GREEN: "g", YELLOW: "y", GREY: "b"}


@dataclass(frozen=True)
class WordleConfig(EnvConfig):
    """Difficulty knobs of :class:`WordleEnv`."""

    word_length: int = knob(
        5, low=4, high=6, doc="Letters per word (each length has its own word lists)."
    )
    max_guesses: int = knob(6, low=1, high=12, doc="Valid guesses allowed before the game is lost.")
    hard_mode: bool = knob(
        False, doc="Every guess must keep green letters in place and reuse all yellow letters."
    )
    feedback: str = knob(
        "verbose",
        choices=("verbose", "agentgym"),
        doc="'verbose': the board with colour names; 'agentgym': AgentGym's 'g b y b b' line.",
    )
    candidates: int = knob(
        0,
        low=0,
        high=200,
        doc="Size of a fixed candidate list shown in the instruction; only its words are "
        "accepted (0: off, any listed word; else 2-200).",
    )

    def validate(self) -> None:
        if self.candidates == 1:
            raise ConfigError(
                "WordleConfig.candidates",
                "1 is not allowed; allowed: 0 (no candidate list) or an integer in [2, 200]",
            )


@dataclass(frozen=True)
class WordLists:
    """Accepted guesses and the common-word subset that answers are drawn from."""

    guesses: frozenset[str]
    answers: tuple[str, ...]


@cache
def word_lists(length: int) -> WordLists:
    """The package's word lists for ``length``-letter words (``envs/data/wordle/``)."""
    folder = resources.files("llmgym.envs") / "data" / "wordle"
    guesses = (folder / f"words{length}.txt").read_text(encoding="utf-8").split()
    answers = (folder / f"answers{length}.txt").read_text(encoding="utf-8").split()
    return WordLists(frozenset(guesses) | frozenset(answers), tuple(sorted(answers)))


@cache
def _answers_for(length: int, split: str) -> tuple[str, ...]:
    return tuple(w for w in word_lists(length).answers if split_of(f"wordle:{w}") == split)


def score_guess(guess: str, answer: str) -> tuple[str, ...]:
    """Per-letter feedback. Greens first; then a letter is yellow only as many times as that
    letter is still unmatched in the answer (so a doubled letter in the guess against a single
    one in the answer gets one yellow and one grey)."""
    result = [GREY] * len(guess)
    unmatched: Counter[str] = Counter()
    for i, (g, a) in enumerate(zip(guess, answer, strict=True)):
        if g == a:
            result[i] = GREEN
        else:
            unmatched[a] += 1
    for i, g in enumerate(guess):
        if result[i] != GREEN and unmatched[g] > 0:
            result[i] = YELLOW
            unmatched[g] -= 1
    return tuple(result)


class WordleEnv(TextEnv[WordleConfig]):
    """Guess the hidden word in a limited number of tries.

    ## Description
    The classic word game. The answer is a common English word of ``word_length`` letters; each
    valid guess is scored letter by letter: green (right letter, right place), yellow (the letter
    is in the word elsewhere) or grey (not in the word, or not that many times). Repeated letters
    are scored as in the original game: a letter is marked yellow only as many times as it occurs
    unmatched in the answer. llmgym ships its own word lists (2,600+ five-letter guesses, 1,300+
    answers; lists for 4 and 6 letters too). Answers are split into train and eval words, so eval
    answers are never seen in training.

    ## Action Space
    Text: a word (``crane``). Spaced letters (``c r a n e``), upper case and a ``guess`` prefix
    are accepted. A guess of the wrong length, with non-letters, not in the word list, or (in hard
    mode) ignoring revealed hints is answered with an explanation, sets
    ``info["invalid_action"]`` and does **not** count as a guess.

    With ``candidates=N`` (2-200; AgentGym uses 40) the game has one fixed list of ``N`` words,
    the same for every task of both splits (AgentGym's client fetches it once, before the first
    reset): listed in the instruction (``The word is one of: ...``) and returned by
    :meth:`candidate_words` (AgentGym's ``/wordle/filtered_vocab``), before any reset too. Only
    its words are accepted. Half the list (``N // 2`` words) is drawn from the train answers and
    the rest from the eval answers, and each task's answer is drawn from its own split's part by
    its task id, so train and eval answers stay apart (eval words are shown to train tasks, as
    words that are never their answer); tasks repeat answers, as AgentGym's seeds do.

    ## Observation Space
    Text: the board so far, one line per guess such as ``2. crane -> c grey, r yellow, a green,
    n grey, e grey``, and how many guesses are left.

    With ``feedback="agentgym"`` each step shows only the latest guess's feedback as AgentGym's
    LMRL-Gym Wordle server words it: one letter per position, ``g`` green, ``y`` yellow, ``b``
    grey, space-separated, then a newline (``g b y b b``); a rejected guess shows exactly
    ``invalid word``. The instruction then explains the letters. What still differs from
    AgentGym: repeated letters are scored as in the original game (AgentGym marks every
    misplaced copy ``y``), a rejected guess does not use up a try (AgentGym's does), the answer
    is fixed at reset (AgentGym re-draws it among the still-consistent words, which is the same
    in distribution), and the first observation is llmgym's instruction (AgentGym's client
    replaces it with its own prompt).

    ## Rewards
    ``1.0`` when the word is found, ``0.0`` otherwise.

    ## Starting State
    An empty board; the answer is drawn from the split's answer words.

    ## Episode End
    Terminates when the word is found (``info["success"] = True``) or after ``max_guesses`` valid
    guesses (the answer is then revealed). Truncated by the registered turn limit (20 turns,
    invalid attempts included).

    ## Arguments
    ``gymnasium.make("llmgym/Wordle-v0", word_length=5, max_guesses=6, hard_mode=False,
    feedback="verbose", candidates=0)``; see :class:`WordleConfig`. AgentGym's setting is
    ``feedback="agentgym", candidates=40``.

    ## Version History
    * v0: Initial version; the ``feedback`` and ``candidates`` options (AgentGym's variant) were
      added later, their defaults keep the original play.
    """

    config_class = WordleConfig
    env_name = "wordle"
    max_observation_length = 4_096
    example = (
        "Observation: 1. slate -> s grey, l grey, a green, t grey, e yellow\n5 guesses left.\n"
        "Thought: The word has A in the middle and an E somewhere else, not at the end.\n"
        "Action: heard"
    )

    _answer = ""
    _board: list[tuple[str, tuple[str, ...]]]
    _listed: tuple[str, ...] = ()  # the candidate list (empty when the option is off)
    _candidates: list[str]
    _candidates_after = 0  # how many guesses of the board _candidates reflects

    def task_ids(self, split: str = "train", config: WordleConfig | None = None) -> TaskIdRange:
        length = (config or self.config).word_length
        return TaskIdRange(split, len(_answers_for(length, split)))

    def instance_key(self) -> str:
        return self._answer

    def reveal(self) -> str:
        """The hidden word (``llmgym play`` shows it to a player who quits)."""
        return self._answer

    def candidate_words(self) -> list[str]:
        """The candidate list, alphabetical (AgentGym's ``filtered_vocab``): ``candidates``
        words holding every task's answer, the same for all tasks of the current config (the
        episode's, else the environment's; no reset needed). Empty when ``candidates`` is 0
        (then every word of the word list is accepted)."""
        config = self.task.config if self._task else self.config
        return list(_candidate_lists(config.word_length, config.candidates)[0])

    def rules(self) -> str:
        config = self.task.config if self._task else self.config
        hard = (
            " Hard mode: keep green letters in place and reuse every yellow letter."
            if config.hard_mode
            else ""
        )
        if config.feedback == "agentgym":
            marks = (
                "Each guess is answered with one letter per position: g (right letter, right "
                "place), y (in the word, elsewhere) or b (not in the word, or not that many "
                "times), e.g. 'g b y b b'."
            )
        else:
            marks = (
                "Each letter of a guess is marked green (right letter, right place), yellow (in "
                "the word, elsewhere) or grey (not in the word, or not that many times)."
            )
        allowed = "the candidate list" if config.candidates else "the word list"
        return (
            f"Guess the hidden {config.word_length}-letter English word in {config.max_guesses} "
            f"guesses. Reply with one word. {marks} Words not in {allowed} do not count as "
            f"guesses.{hard}"
        )

    def _reset_task(self, task: Task[WordleConfig]) -> tuple[str, str]:
        config = task.config
        if config.candidates:
            listed, answers = _candidate_lists(config.word_length, config.candidates)
            pool = answers[task.split]
            self._answer = pool[TaskRng("wordle-answer", task.task_id).randbelow(len(pool))]
        else:
            listed = ()
            self._answer = _answers_for(config.word_length, task.split)[task.index]
        self._board = []
        self._listed = listed
        self._candidates = list(self._listed or word_lists(config.word_length).answers)
        self._candidates_after = 0
        instruction = (
            f"Guess the hidden {config.word_length}-letter word in {config.max_guesses} guesses."
        )
        if self._listed:
            instruction += f" The word is one of: {' '.join(self._listed)}."
        if config.feedback == "agentgym":
            instruction += (
                " Each guess is answered letter by letter: g (right place), y (in the word, "
                "elsewhere), b (not in the word)."
            )
        return f"{instruction} Reply with a single word.", instruction

    def _step(self, action: str) -> Transition:
        config = self.task.config
        guess = _parse_guess(action)
        problem = self._problem_with(guess, config)
        if problem:
            if config.feedback == "agentgym":
                return self.invalid("invalid word")
            return self.invalid(
                f"{problem} It does not count as a guess.\n{self._board_text(config)}"
            )
        feedback = score_guess(guess, self._answer)
        self._board.append((guess, feedback))
        if config.feedback == "agentgym":
            solved = guess == self._answer
            return Transition(
                observation=" ".join(_LETTER[colour] for colour in feedback) + "\n",
                reward=1.0 if solved else 0.0,
                terminated=solved or len(self._board) >= config.max_guesses,
                success=solved,
            )
        if guess == self._answer:
            text = f"{self._board_text(config)}\nSolved in {_guesses(len(self._board))}!"
            return Transition(observation=text, reward=1.0, terminated=True, success=True)
        if len(self._board) >= config.max_guesses:
            text = f"{self._board_text(config)}\nOut of guesses. The word was {self._answer}."
            return Transition(observation=text, terminated=True, success=False)
        return Transition(observation=self._board_text(config))

    def _problem_with(self, guess: str, config: WordleConfig) -> str:
        n = config.word_length
        if not guess or not guess.isascii() or not guess.isalpha():
            return f"Reply with one {n}-letter word using only the letters a-z."
        if len(guess) != n:
            return f"'{guess}' has {len(guess)} letters; the word has {n}."
        if guess not in word_lists(n).guesses:
            return f"'{guess}' is not in the word list."
        if self._listed and guess not in self._listed:
            return f"'{guess}' is not one of the candidate words."
        if config.hard_mode:
            return _hard_mode_violation(guess, self._board)
        return ""

    def _board_text(self, config: WordleConfig) -> str:
        lines = [
            f"{i}. {guess} -> "
            + ", ".join(f"{letter} {colour}" for letter, colour in zip(guess, fb, strict=True))
            for i, (guess, fb) in enumerate(self._board, start=1)
        ]
        left = config.max_guesses - len(self._board)
        lines.append(f"{_guesses(left)} left." if lines else "No guesses yet.")
        return "\n".join(lines)

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> str:
        """A feedback-only solver; it never reads the answer. It keeps the answer-list words
        consistent with the board. While many remain it guesses the one whose distinct letters
        are most common among them; once few remain it guesses the word (any accepted word,
        or only consistent ones in hard mode) that splits them into the most feedback groups."""
        for guess, feedback in self._board[self._candidates_after :]:
            self._candidates = [w for w in self._candidates if score_guess(guess, w) == feedback]
        self._candidates_after = len(self._board)
        candidates = self._candidates
        if len(candidates) <= 2:
            return candidates[0]
        coverage = _letter_coverage(candidates)
        if len(candidates) > _SPLIT_AT:
            return max(candidates, key=lambda w: (coverage(w), w))
        pool = list(candidates)
        config = self.task.config
        if not config.hard_mode and not self._listed:
            extra = sorted(word_lists(config.word_length).guesses, key=lambda w: (-coverage(w), w))
            pool += extra[:80]
        consistent = set(candidates)
        return max(
            pool, key=lambda g: (len({score_guess(g, w) for w in candidates}), g in consistent, g)
        )

    def sample_action(self, rng: np.random.Generator) -> str:
        words = self._listed or word_lists(self.task.config.word_length).answers
        return words[int(rng.integers(len(words)))]


def _guesses(count: int) -> str:
    return f"{count} guess{'es' if count != 1 else ''}"


@bounded_cache(64)
def _candidate_lists(length: int, size: int) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The candidate list of ``size`` words (alphabetical) and, per split, the part of it that
    split's answers are drawn from: ``size // 2`` train answers and the rest eval answers (every
    split of every word length has more than the 100 answers the largest list needs)."""
    if not size:
        return (), {}
    rng = TaskRng("wordle-candidates", length, size)
    parts = {
        split: tuple(rng.sample(_answers_for(length, split), wanted))
        for split, wanted in (("train", size // 2), ("eval", size - size // 2))
    }
    return tuple(sorted([*parts["train"], *parts["eval"]])), parts


def _letter_coverage(candidates: list[str]) -> Callable[[str], int]:
    """Score a word by how many candidates share each of its distinct letters."""
    frequency: Counter[str] = Counter()
    for word in candidates:
        frequency.update(set(word))
    return lambda word: sum(frequency[c] for c in set(word))


def _parse_guess(action: str) -> str:
    text = normalize_command(action, max_length=200)
    prefixed = _PREFIX.match(text)
    if prefixed:
        text = prefixed.group(1)
    letters = text.split(" ")
    if len(letters) > 1 and all(len(part) == 1 for part in letters):
        text = "".join(letters)
    return text


def _hard_mode_violation(guess: str, board: list[tuple[str, tuple[str, ...]]]) -> str:
    for previous, feedback in board:
        for i, (letter, colour) in enumerate(zip(previous, feedback, strict=True)):
            if colour == GREEN and guess[i] != letter:
                return f"Hard mode: letter {i + 1} must be '{letter}'."
        needed = Counter(
            letter for letter, colour in zip(previous, feedback, strict=True) if colour != GREY
        )
        for letter, count in needed.items():
            if guess.count(letter) < count:
                return f"Hard mode: the guess must contain '{letter}'" + (
                    f" {count} times." if count > 1 else "."
                )
    return ""
