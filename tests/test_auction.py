"""The auction's rules: values and budgets, bids, first- and second-price payments, ties,
what is revealed, sealed bids in the AEC loop, and the scripted bidders."""

from __future__ import annotations

import numpy as np
import pytest

from tests.extras import need

need("pettingzoo")

from llmgym.core import Task
from llmgym.envs.multiagent.auction import AuctionConfig, AuctionGame, raw_env
from llmgym.errors import ConfigError, IllegalMove


def _game(task_id: str = "eval/00000", **config) -> AuctionGame:
    split = task_id.split("/")[0]
    return AuctionGame(Task("auction", task_id, split, AuctionConfig(**config)))


def _round(game: AuctionGame, **bids: int) -> dict[str, float]:
    return game.play(
        {player: game.parse(player, f"bid {amount}") for player, amount in bids.items()}
    )


def test_values_budgets_and_bidder_types() -> None:
    for index in range(30):
        game = _game(f"train/{index:05d}", players=4, rounds=6)
        totals = {sum(values) for values in game.instance.values}
        assert totals == {6 * (10 + 100) // 2}
        assert all(1 <= v <= 200 for values in game.instance.values for v in values)
        assert all(0.5 <= s <= 0.9 for s in game.instance.shading)
        assert len(set(game.instance.items)) == 6
        assert game.budget == dict.fromkeys(game.players, 150)


def test_bid_grammar_and_budget() -> None:
    game = _game(budget=50)
    for text, amount in (("bid 12", 12), ("12", 12), ("$7", 7), ("I bid 3", 3), ("pass", 0)):
        assert game.parse("player_0", text) == amount
    with pytest.raises(IllegalMove, match="only 50 left"):
        game.parse("player_0", "bid 51")
    for bad in ("bid -3", "bid 1.5", "bid lots", "bid ５", "", "bid 99999999999"):
        with pytest.raises(IllegalMove):
            game.parse("player_0", bad)


def test_first_price_winner_pays_its_bid() -> None:
    game = _game()
    value = game.value("player_1")
    rewards = _round(game, player_0=10, player_1=40, player_2=25)
    assert rewards == {"player_1": value - 40} and game.budget["player_1"] == 110
    assert game.results[0].winner == "player_1" and game.results[0].price == 40
    assert game.scores["player_1"] == value - 40


def test_second_price_winner_pays_the_second_bid() -> None:
    game = _game(pricing="second")
    value = game.value("player_2")
    rewards = _round(game, player_0=10, player_1=25, player_2=40)
    assert rewards == {"player_2": value - 25} and game.budget["player_2"] == 125


def test_ties_follow_the_rounds_drawn_order_and_zero_bids_sell_nothing() -> None:
    game = _game()
    order = game.instance.tie_order[0]
    rewards = _round(game, player_0=30, player_1=30, player_2=30)
    assert game.results[0].winner == game.players[order[0]]
    assert list(rewards) == [game.players[order[0]]]
    rewards = _round(game, player_0=0, player_1=0, player_2=0)
    assert rewards == {} and game.results[1].winner is None
    assert "nobody bid" in game.observe("player_0")


def test_auction_ends_after_the_last_round() -> None:
    game = _game(rounds=2, players=2)
    _round(game, player_0=1, player_1=0)
    assert not game.finished
    _round(game, player_0=0, player_1=1)
    assert game.finished and game.to_act() == []
    assert "The auction is over. Profits:" in game.observe("player_0")


def test_reveal_winner_hides_the_losing_bids() -> None:
    game = _game(reveal="winner")
    _round(game, player_0=11, player_1=37, player_2=23)
    text = game.observe("player_0")
    assert "player_1 won and paid 37" in text and "23" not in text.split("Results so far:")[1]
    shown = _game()
    _round(shown, player_0=11, player_1=37, player_2=23)
    assert "bids player_0 11, player_1 37, player_2 23" in shown.observe("player_0")


def test_others_values_are_hidden() -> None:
    game = _game()
    text = game.observe("player_0")
    own = ", ".join(
        f"{item} {game.value('player_0', i)}" for i, item in enumerate(game.instance.items)
    )
    other = ", ".join(
        f"{item} {game.value('player_1', i)}" for i, item in enumerate(game.instance.items)
    )
    assert own in text and other not in text


def test_bids_stay_sealed_in_the_aec_loop() -> None:
    env = raw_env()
    env.reset(seed=0, options={"task_id": "eval/00000"})
    assert env.agent_selection == "player_0"
    before = env.observe("player_1")
    env.step("bid 77")
    assert env.agent_selection == "player_1"
    assert env.observe("player_1") == before and "77" not in env.observe("player_1")
    assert env.infos["player_0"]["to_act"] is False
    env.step("bid 5")
    env.step("bid 6")
    assert env.game.round == 1 and env.game.results[0].bids["player_0"] == 77


def test_a_forfeiting_bidder_leaves_the_others_bidding() -> None:
    game = _game()
    game.forfeit("player_1")
    assert not game.finished and game.to_act() == ["player_0", "player_2"]
    assert game.scores["player_1"] == -1.0
    assert "You forfeited" in game.observe("player_1")
    _round(game, player_0=5, player_2=6)
    assert "player_1" not in game.results[0].bids
    game.forfeit("player_2")
    assert game.finished  # a single bidder left: the auction is over


def test_scripted_bidders() -> None:
    rng = np.random.default_rng(0)
    game = _game()
    for player in game.players:
        shade = game.instance.shading[game.players.index(player)]
        value = game.value(player)
        assert game.policy_action(player, "shader", rng, {}) == f"bid {int(shade * value)}"
        assert game.policy_action(player, "truthful", rng, {}) == f"bid {value}"
        for _ in range(20):
            assert 0 <= game.parse(player, game.sample_action(player, rng)) <= value
    second = _game(pricing="second")
    assert second.policy_action("player_0", "shader", rng, {}) == f"bid {second.value('player_0')}"
    poor = _game(budget=3)
    assert poor.policy_action("player_0", "truthful", rng, {}) == "bid 3"


def test_oracle_outbids_by_one_when_the_item_is_worth_it() -> None:
    game = _game()
    rivals = {p: game._scripted_bid(p, "shader", 0, 150) for p in ("player_1", "player_2")}
    bid = int(game.oracle_action("player_0", rivals).split()[1])
    top = max(rivals.values())
    assert bid in (0, top, top + 1)
    if bid:
        assert game.value("player_0") > top


def test_config_ranges() -> None:
    with pytest.raises(ConfigError, match="players"):
        AuctionConfig(players=1)
    with pytest.raises(ConfigError, match="pricing"):
        AuctionConfig(pricing="dutch")
    assert raw_env(players=5).possible_agents == [f"player_{i}" for i in range(5)]
