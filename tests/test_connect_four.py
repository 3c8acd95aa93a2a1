"""Connect Four's rules: lines in every direction, draws, coordinates, openings and players."""

from __future__ import annotations

import numpy as np
import pytest

from tests.extras import need

need("pettingzoo")

from llmgym.core import Task
from llmgym.envs.multiagent.connect_four import (
    ConnectFourConfig,
    ConnectFourGame,
    board_geometry,
    raw_env,
)
from llmgym.errors import ConfigError, IllegalMove


def _game(moves: str = "", **config) -> ConnectFourGame:
    """A game from the empty board (``opening_plies=0``) after ``moves`` (column letters)."""
    config = ConnectFourConfig(opening_plies=0, **config)
    game = ConnectFourGame(Task("connect_four", "train/00000", "train", config))
    for letter in moves:
        game.play({game.players[game.turn]: game.parse(game.players[game.turn], letter)})
    return game


@pytest.mark.parametrize(
    "moves",
    [
        "aabbccd",  # X a1 b1 c1 d1: horizontal
        "abababa",  # X a1 a2 a3 a4: vertical
        "abbcdccdgdd",  # X a1 b2 c3 d4: diagonal rising to the right
        "gffedeedadd",  # X d4 e3 f2 g1: diagonal falling to the right
    ],
)
def test_four_in_a_line_wins(moves: str) -> None:
    game = _game(moves[:-1])
    assert not game.finished
    rewards = game.play({"player_0": game.parse("player_0", moves[-1])})
    assert game.finished and rewards == {"player_0": 1.0, "player_1": -1.0} == game.scores
    assert game.result == "player_0 (X) connected 4 and won."
    assert "Game over: player_0 (X) connected 4 and won. You lost." in game.observe("player_1")
    assert game.to_act() == []


def test_three_in_a_line_wins_with_connect_three() -> None:
    game = _game("aabbc", connect=3, rows=5, columns=5)
    assert game.finished and game.board.wins(game.stones[0])


def test_full_board_is_a_draw() -> None:
    game = _game("abaacacbbdbddcdc", rows=4, columns=4)
    assert game.finished and game.result == "The board is full: a draw."
    assert "It is a draw." in game.observe("player_0")


def test_moves_by_column_number_or_landing_cell() -> None:
    game = _game("dd")
    assert game.parse("player_0", "d") == 3
    assert game.parse("player_0", "4") == 3
    assert game.parse("player_0", "d3") == 3
    assert game.parse("player_0", "Drop in column D.") == 3
    assert game.parse("player_0", "**play d**") == 3
    with pytest.raises(IllegalMove, match="lands on d3, not d1"):
        game.parse("player_0", "d1")
    for bad in ("h", "8", "0", "z9", "", "e 4", "d３", "١"):
        with pytest.raises(IllegalMove, match="not a column"):
            game.parse("player_0", bad)
    full = _game("aaaaaa")
    with pytest.raises(IllegalMove, match="column a is full"):
        full.parse("player_0", "a")
    assert full.legal_actions("player_0") == list("bcdefg")
    assert full.legal_actions("player_1") is None


def test_board_rendering_has_coordinates() -> None:
    game = _game("dc")
    text = game.observe("player_0")
    assert "    a b c d e f g" in text
    assert " 1  . . O X . . ." in text
    assert "player_1 (O) dropped a disc in column c; it landed on c1." in text
    assert "Your move. Columns you can play: a, b, c, d, e, f, g." in text
    assert "Waiting for player_0 (X)" in game.observe("player_1")


def test_openings_are_the_distinct_positions_split_by_content() -> None:
    env = raw_env()
    train, eval_ = env.task_ids("train"), env.task_ids("eval")
    assert len(train) + len(eval_) == 1120  # distinct positions after 4 plies on 6x7
    assert len(eval_) == 224
    positions = {"train": set(), "eval": set()}
    for split, ids in (("train", train), ("eval", eval_)):
        for task_id in ids:
            game = ConnectFourGame(Task("connect_four", task_id, split, env.config))
            assert len(game.history) == 4 and not game.finished
            positions[split].add((game.stones[0], game.stones[1]))
    assert len(positions["train"]) == len(train) and len(positions["eval"]) == len(eval_)
    assert not positions["train"] & positions["eval"]
    assert [len(raw_env(opening_plies=p).task_ids("train")) for p in (0, 1, 2)] == [1, 6, 40]
    assert len(raw_env(opening_plies=0).task_ids("eval")) == 0


def test_config_ranges() -> None:
    with pytest.raises(ConfigError, match="connect"):
        ConnectFourConfig(rows=4, columns=4, connect=5)
    with pytest.raises(ConfigError, match="opening_plies"):
        ConnectFourConfig(opening_plies=5)
    small = raw_env(rows=5, columns=5, connect=3, opening_plies=2)
    small.reset(seed=0)
    assert "a b c d e" in small.observe(small.agent_selection)


def test_scripted_players_take_wins_and_block() -> None:
    rng = np.random.default_rng(0)
    win = _game("aabbc")  # X: a1 b1 c1 ; O: a2 b2 ; O to move must block d1
    assert win.policy_action("player_1", "greedy", rng, {}) == "d"
    assert win.oracle_action("player_1", {}) == "d"
    threat = _game("aabbcc")  # X to move wins at d1
    for policy in ("greedy", "cautious"):
        assert threat.policy_action("player_0", policy, rng, {}) == "d"
    assert threat.oracle_action("player_0", {}) == "d"


def test_cautious_avoids_handing_over_a_win() -> None:
    # X holds b2 c2 d2 (above O b1, X c1, O d1); a disc in a or e would let X complete the
    # row on top of it.
    game = _game("cbbddgc")
    rng = np.random.default_rng(1)
    cautious = {game.policy_action("player_1", "cautious", rng, {}) for _ in range(40)}
    greedy = {game.policy_action("player_1", "greedy", rng, {}) for _ in range(200)}
    assert cautious and not cautious & {"a", "e"}
    assert greedy & {"a", "e"}
    assert game.oracle_action("player_1", {}) not in ("a", "e")


def test_geometry_windows() -> None:
    board = board_geometry(6, 7, 4)
    assert len(board.windows) == 69  # the classic count of winning lines
    assert board_geometry(6, 7, 4) is board
