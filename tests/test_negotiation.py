"""The negotiation's rules: pools and valuations, the move grammar, deals and their worth, the
turn limit, and the scripted negotiators."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.extras import need

need("pettingzoo")

from llmgym.core import Task
from llmgym.envs.multiagent.negotiation import NegotiationConfig, NegotiationGame, raw_env
from llmgym.errors import IllegalMove


def _game(task_id: str = "eval/00000", **config) -> NegotiationGame:
    split = task_id.split("/")[0]
    return NegotiationGame(Task("negotiation", task_id, split, NegotiationConfig(**config)))


def _move(game: NegotiationGame, action: str) -> dict[str, float]:
    player = game.mover()
    return game.play({player: game.parse(player, action)})


def _worth(values, share) -> int:
    return sum(v * n for v, n in zip(values, share, strict=True))


@pytest.mark.parametrize("config", [{}, {"item_types": 5, "max_count": 3, "total_value": 20}])
def test_pools_have_private_values_worth_the_same_total_and_a_fair_split(config) -> None:
    for index in range(40):
        game = _game(f"train/{index:05d}", **config)
        total = game.config.total_value
        first, second = (game.values[p] for p in game.players)
        assert _worth(first, game.counts) == _worth(second, game.counts) == total
        assert first != second and all(a or b for a, b in zip(first, second, strict=True))
        assert all(1 <= n <= game.config.max_count for n in game.counts)
        fair = [
            share
            for share in itertools.product(*(range(n + 1) for n in game.counts))
            if 2 * _worth(first, share) >= total
            and 2 * _worth(second, tuple(n - k for n, k in zip(game.counts, share, strict=True)))
            >= total
        ]
        assert fair


def test_values_are_private() -> None:
    game = _game()
    mine = game.observe("player_0")
    theirs = ", ".join(f"{game.items[k][0]} {v}" for k, v in enumerate(game.values["player_1"]))
    assert "Your values per item: " in mine and theirs not in mine
    assert "player_1's values are hidden" in mine


def test_proposal_grammar() -> None:
    game = _game()
    count = game.counts[0]
    assert game.parse("player_0", f"propose {count} books, 0 hats, 1 ball")[0] == "propose"
    assert game.parse("player_0", "Propose: books=1, hats=0")[1][:2] == (1, 0)
    assert game.parse("player_0", "I propose to keep 1 book")[1] == (1, 0, 0)
    assert game.parse("player_0", "offer 1 hat")[1] == (0, 1, 0)
    with pytest.raises(IllegalMove, match="no 'apples'"):
        game.parse("player_0", "propose 1 apples")
    with pytest.raises(IllegalMove, match=f"only {count}"):
        game.parse("player_0", f"propose {count + 1} books")
    with pytest.raises(IllegalMove, match="twice"):
        game.parse("player_0", "propose 1 book, 1 books")
    with pytest.raises(IllegalMove, match="only the items you keep"):
        game.parse("player_0", "propose 1 book for me and 2 hats for you")
    with pytest.raises(IllegalMove, match="names no items"):
        game.parse("player_0", "propose a fair split")


def test_talk_accept_and_walk_away_grammar() -> None:
    game = _game(max_message_length=20)
    assert game.parse("player_0", "say: I like hats") == ("say", "I like hats")
    assert game.parse("player_0", "Say   hello\n there") == ("say", "hello there")
    with pytest.raises(IllegalMove, match="empty"):
        game.parse("player_0", "say   ")
    with pytest.raises(IllegalMove, match="at most 20"):
        game.parse("player_0", "say " + "x" * 21)
    with pytest.raises(IllegalMove, match="no proposal from the other player"):
        game.parse("player_0", "accept")
    assert game.parse("player_0", "walk away") == ("walk", None)
    with pytest.raises(IllegalMove, match="not a move"):
        game.parse("player_0", "let us be friends")


def test_a_deal_pays_each_player_its_own_worth() -> None:
    game = _game()
    _move(game, "propose 1 book, 0 hats, 0 balls")
    with pytest.raises(IllegalMove, match="no proposal from the other"):
        game.parse("player_0", "accept")  # nobody accepts their own proposal
    rewards = _move(game, "accept")
    keep = (1, 0, 0)
    rest = tuple(n - k for n, k in zip(game.counts, keep, strict=True))
    assert game.finished and game.deal == {"player_0": keep, "player_1": rest}
    assert rewards == {
        "player_0": _worth(game.values["player_0"], keep),
        "player_1": _worth(game.values["player_1"], rest),
    }
    assert game.scores == rewards
    assert "Deal: you get" in game.observe("player_1")
    assert game.success("player_1") == (2 * rewards["player_1"] >= 10)


def test_a_later_proposal_replaces_the_standing_one() -> None:
    game = _game()
    _move(game, "propose 1 book")
    _move(game, "propose 1 hat")
    with pytest.raises(IllegalMove, match="no proposal from the other"):
        game.parse("player_1", "accept")  # the standing proposal is its own now
    rewards = _move(game, "accept")  # player_0 accepts player_1's proposal: it keeps 1 hat
    assert game.deal["player_1"] == (0, 1, 0) and rewards["player_1"] == game.values["player_1"][1]


def test_no_deal_after_the_last_turn_or_walking_away() -> None:
    game = _game(max_turns=3)
    for action in ("say hi", "propose 1 book", "say no"):
        assert _move(game, action) == {}
    assert game.finished and game.deal is None and game.scores == {"player_0": 0, "player_1": 0}
    assert "the turns ran out: no deal" in game.observe("player_0")
    assert game.outcome("player_0") == "draw" and not game.success("player_0")
    walked = _game()
    _move(walked, "walk away")
    assert walked.finished and "player_0 walked away" in walked.observe("player_1")


def test_forfeit_ends_without_a_deal() -> None:
    game = _game()
    rewards = game.forfeit("player_0")
    assert game.finished and rewards == {"player_0": -1.0}
    assert game.outcome("player_1") == "win" and "forfeited" in game.observe("player_1")


def test_long_conversations_keep_the_latest_turns_visible() -> None:
    game = _game(max_turns=40, max_message_length=4000)
    for turn in range(39):
        _move(game, f"say {turn:02d} " + "blah " * 700)
    text = game.observe(game.mover())
    assert len(text) < 16_000 and "earlier turns not shown" in text and "say 38" not in text
    assert '"38 blah' in text and "Your turn (1 turn left" in text


def test_conceder_accepts_what_meets_its_demand_and_concedes_over_time() -> None:
    rng = np.random.default_rng(0)
    game = _game("eval/00003")
    first = game.policy_action("player_0", "conceder", rng, {})
    assert first.startswith("propose")
    demand = game._aspiration("player_0", "conceder", 0)
    last = game._aspiration("player_0", "conceder", 8)
    assert demand == pytest.approx(0.9) and last == pytest.approx(0.5)
    assert game._aspiration("player_0", "boulware", 4) > game._aspiration("player_0", "conceder", 4)
    _move(game, first)
    everything = ", ".join(f"0 {plural}" for _, plural in game.items)
    _move(game, f"propose {everything}")  # player_1 keeps nothing: player_0 gets the pool
    assert game.policy_action("player_0", "conceder", rng, {}) == "accept"


def test_oracle_reaches_a_good_deal_against_the_conceder() -> None:
    for index in range(20):
        env = raw_env()
        env.reset(seed=index, options={"task_id": f"eval/{index:05d}"})
        oracle = "player_0" if index % 2 else "player_1"
        rng = np.random.default_rng(index)
        for agent in env.agent_iter(100):
            _, _, terminated, _, _ = env.last()
            if terminated:
                env.step(None)
            elif agent == oracle:
                env.step(env.game.oracle_action(agent, {}))
            else:
                env.step(env.game.policy_action(agent, "conceder", rng, {}))
        assert env.game.success(oracle), env.game.render()


def test_random_actions_are_valid() -> None:
    game = _game()
    rng = np.random.default_rng(0)
    while not game.finished:
        _move(game, game.sample_action(game.mover(), rng))
