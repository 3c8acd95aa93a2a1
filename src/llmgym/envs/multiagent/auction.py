"""A sealed-bid auction: bidders with private values and budgets bid simultaneously on one item
per round; what the revealed bids say about the others is the key to bidding well.

PettingZoo conventions: ``env()`` (AEC, order-enforced), ``raw_env`` and ``parallel_env`` (the
natural API here: every bidder moves at once); :class:`AuctionEnv` is the single-agent
environment ``llmgym/Auction-v0``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmgym.core import Task, TaskIdRange, TaskRng, knob, normalize_command, quote_action, split_of
from llmgym.core.cache import bounded_cache
from llmgym.envs.multiagent.api import pettingzoo_api
from llmgym.envs.multiagent.game import Game, GameConfig
from llmgym.envs.multiagent.versus import VersusEnv, versus_config
from llmgym.errors import IllegalMove

__all__ = [
    "AuctionConfig",
    "AuctionEnv",
    "AuctionGame",
    "AuctionVersusConfig",
    "env",
    "parallel_env",
    "raw_env",
]

ITEM_NAMES = (
    "vase", "lamp", "clock", "rug", "painting", "chair", "mirror", "desk",
    "globe", "kettle", "violin", "telescope", "bicycle", "camera", "sculpture", "quilt",
)  # fmt: skip
_BID = re.compile(r"^(?:i )?(?:bid|offer|pay)?[ :]*\$?([0-9]{1,9})(?: dollars| coins)?$")
_PASS = ("pass", "no bid", "skip", "bid nothing")


@dataclass(frozen=True)
class AuctionConfig(GameConfig):
    """Bidders, items, values, budgets and the auction's pricing rule."""

    players: int = knob(3, low=2, high=6, doc="Bidders.")
    rounds: int = knob(5, low=1, high=12, doc="Items, auctioned one per round.")
    max_value: int = knob(
        100,
        low=10,
        high=10_000,
        doc="Private values are drawn uniformly from max_value/10 .. max_value, then rescaled so "
        "that every bidder's values add up to the same total.",
    )
    budget: int = knob(150, low=1, high=1_000_000, doc="Each bidder's money for the whole auction.")
    pricing: str = knob(
        "first",
        choices=("first", "second"),
        doc="'first': the winner pays its bid; 'second': it pays the second-highest bid.",
    )
    reveal: str = knob(
        "all",
        choices=("all", "winner"),
        doc="What everyone learns after a round: 'all' bids, or only the winner and the price.",
    )


@dataclass(frozen=True)
class _Instance:
    items: tuple[str, ...]
    values: tuple[tuple[int, ...], ...]  # [player][round]
    shading: tuple[float, ...]  # each bidder's scripted bid as a share of its value
    tie_order: tuple[tuple[int, ...], ...]  # per round, who wins a tie first


@bounded_cache(4096)
def _generate(env_name: str, task_id: str, split: str, config: AuctionConfig) -> _Instance:
    """The items, values and bidder types of ``task_id``: the first candidate (by attempt)
    whose content hashes into ``split``. Each bidder's values add up to the same total (the
    mean value times the rounds), so no seat is favoured by the draw."""
    low = max(1, config.max_value // 10)
    total = _total(config)
    attempt = 0
    while True:
        rng = TaskRng(env_name, task_id, attempt)
        attempt += 1
        items = tuple(rng.sample(ITEM_NAMES, config.rounds))
        values = tuple(
            _values(rng, config.rounds, low, config.max_value, total) for _ in range(config.players)
        )
        shading = tuple(round(rng.uniform(0.5, 0.9), 2) for _ in range(config.players))
        order = []
        for _ in range(config.rounds):
            seats = list(range(config.players))
            rng.shuffle(seats)
            order.append(tuple(seats))
        if split_of(f"{items}|{values}|{shading}") == split:
            return _Instance(items, values, shading, tuple(order))


def _total(config: AuctionConfig) -> int:
    """What every bidder's values add up to: the mean value times the rounds."""
    return config.rounds * (max(1, config.max_value // 10) + config.max_value) // 2


def _values(rng: TaskRng, rounds: int, low: int, high: int, total: int) -> tuple[int, ...]:
    """``rounds`` values drawn from ``low..high`` and rescaled to add up to ``total``."""
    raw = [rng.randint(low, high) for _ in range(rounds)]
    scaled = [max(1, round(x * total / sum(raw))) for x in raw]
    scaled[scaled.index(max(scaled))] += total - sum(scaled)
    return tuple(scaled)


@dataclass(frozen=True)
class _Result:
    item: str
    bids: dict[str, int]
    winner: str | None
    price: int


class AuctionGame(Game[AuctionConfig]):
    """Rules of the sealed-bid auction for :class:`raw_env`, :class:`parallel_env` and
    :class:`AuctionEnv`."""

    name = "auction"
    config_class = AuctionConfig
    simultaneous = True
    policies = ("random", "shader", "truthful", "oracle")
    default_policy = "shader"
    example = (
        "Observation: Round 3 of 5: the clock is up for sale; it is worth 80 to you. Your "
        "budget left: 150. Round 2 (lamp): bids player_0 30, player_1 44, player_2 36; "
        "player_1 won and paid 44.\n"
        "Thought: The others bid about 60-70% of what they value. A bid of 50 should win the "
        "clock with a profit of 30.\n"
        "Action: bid 50"
    )

    @classmethod
    def player_count(cls, config: AuctionConfig) -> int:
        return config.players

    @classmethod
    def task_ids(cls, split: str, config: AuctionConfig) -> TaskIdRange:
        return TaskIdRange(split, 10_000 if split == "train" else 1_000)

    def __init__(self, task: Task[AuctionConfig]) -> None:
        super().__init__(task)
        c = self.config
        self.instance = _generate(task.env_name, task.task_id, task.split, c)
        self.round = 0
        self.budget = dict.fromkeys(self.players, c.budget)
        self.results: list[_Result] = []

    # ------------------------------------------------------------------ rules
    def to_act(self) -> list[str]:
        return [] if self.finished else list(self.live)

    def value(self, player: str, round_index: int | None = None) -> int:
        index = self.round if round_index is None else round_index
        return self.instance.values[self.players.index(player)][index]

    def parse(self, player: str, action: str) -> int:
        text = normalize_command(action, max_length=60)
        limit = self.budget[player]
        if text in _PASS:
            return 0
        match = _BID.match(text)
        if match is None:
            raise IllegalMove(
                f"{quote_action(action)} is not a bid. Reply with 'bid <amount>', a whole "
                f"number from 0 to {limit} (0 to pass)."
            )
        amount = int(match.group(1))
        if amount > limit:
            raise IllegalMove(f"you bid {amount} but have only {limit} left; bid 0 to {limit}.")
        return amount

    def apply(self, moves: Mapping[str, Any]) -> dict[str, float]:
        c = self.config
        bids = {player: int(moves[player]) for player in self.live}
        item = self.instance.items[self.round]
        top = max(bids.values())
        winner: str | None = None
        price = 0
        rewards: dict[str, float] = {}
        if top > 0:
            tied = {p for p, b in bids.items() if b == top}
            winner = next(
                self.players[i]
                for i in self.instance.tie_order[self.round]
                if self.players[i] in tied
            )
            others = sorted((b for p, b in bids.items() if p != winner), reverse=True)
            price = top if c.pricing == "first" else (others[0] if others else 0)
            self.budget[winner] -= price
            rewards[winner] = float(self.value(winner) - price)
        self.results.append(_Result(item, bids, winner, price))
        self.round += 1
        if self.round >= c.rounds:
            self.finished = True
        return rewards

    def default_move(self, player: str, rng: np.random.Generator) -> int:
        return 0

    # ------------------------------------------------------------------ text
    def _result_text(self, index: int, result: _Result) -> str:
        head = f"Round {index + 1} ({result.item}):"
        if self.config.reveal == "all":
            bids = ", ".join(f"{p} {b}" for p, b in result.bids.items())
            head += f" bids {bids};"
        if result.winner is None:
            return f"{head} nobody bid, the {result.item} was not sold."
        return f"{head} {result.winner} won and paid {result.price}."

    def observe(self, player: str) -> str:
        c = self.config
        rule = (
            "the highest bid wins and pays its bid"
            if c.pricing == "first"
            else "the highest bid wins and pays the second-highest bid"
        )
        others = [p for p in self.players if p != player]
        lines = [
            f"You are {player}, one of {len(self.players)} bidders ({', '.join(others)} are "
            f"the others). Sealed bids, {rule}; ties go to a bidder drawn at random.",
            "Your values: "
            + ", ".join(
                f"{name} {self.value(player, i)}" for i, name in enumerate(self.instance.items)
            )
            + f". The others' values are hidden; every bidder's values add up to the same "
            f"total, {_total(c)}.",
            f"Your budget left: {self.budget[player]}. Your profit so far: "
            f"{self.scores[player]:g}.",
        ]
        if self.results:
            lines.append("Results so far:")
            lines += [f"  {self._result_text(i, r)}" for i, r in enumerate(self.results)]
        if player not in self.live and not self.finished:
            lines.append("You forfeited and take no further part in the auction.")
        elif self.finished:
            ranking = ", ".join(f"{p} {self.scores[p]:g}" for p in self.players)
            lines.append(f"The auction is over. Profits: {ranking}.")
        else:
            item = self.instance.items[self.round]
            lines.append(
                f"Round {self.round + 1} of {c.rounds}: the {item} is up for sale; it is worth "
                f"{self.value(player)} to you. Place your sealed bid: 'bid <amount>' "
                f"(0 to {self.budget[player]}; 0 passes)."
            )
        return "\n".join(lines)

    def instruction(self, player: str) -> str:
        return (
            "Win the auction: end with a higher profit (your values of the items you win, "
            "minus what you pay) than every other bidder."
        )

    @classmethod
    def rules(cls, config: AuctionConfig) -> str:
        c = config
        pricing = (
            "pays its own bid"
            if c.pricing == "first"
            else "pays the second-highest bid (sealed-bid second-price, Vickrey)"
        )
        reveal = (
            "every bid is revealed"
            if c.reveal == "all"
            else "the winner and the price are revealed"
        )
        return (
            f"A sealed-bid auction of {c.rounds} items, one per round, among {c.players} "
            f"bidders. Each bidder has private values for the items (drawn at random, then "
            f"scaled so that every bidder's values add up to {_total(c)}) and a budget of "
            f"{c.budget} for the whole auction. Every round all bidders bid at the same time; "
            f"the highest bid wins the item and {pricing}; after the round {reveal}. Your "
            f"profit is the value of the items you win minus what you pay. Action: "
            f"'bid <amount>', a whole number from 0 to your budget left (0 passes)."
        )

    def render(self) -> str:
        lines = [
            f"{p}: values {self.instance.values[i]}, budget {self.budget[p]}, profit "
            f"{self.scores[p]:g}"
            for i, p in enumerate(self.players)
        ]
        lines += [self._result_text(i, r) for i, r in enumerate(self.results)]
        return "\n".join(lines)

    def instance_key(self) -> str:
        i = self.instance
        return f"{i.items}|{i.values}|{i.shading}"

    # ------------------------------------------------------------------ players
    def sample_action(self, player: str, rng: np.random.Generator) -> str:
        ceiling = min(self.budget[player], self.value(player))
        return f"bid {int(rng.integers(ceiling + 1))}"

    def _scripted_bid(self, player: str, policy: str, round_index: int, budget: int) -> int:
        value = self.value(player, round_index)
        if policy == "truthful" or self.config.pricing == "second":
            return min(budget, value)
        shade = self.instance.shading[self.players.index(player)]
        return min(budget, int(shade * value))

    def policy_action(
        self, player: str, policy: str, rng: np.random.Generator, pending: Mapping[str, Any]
    ) -> str:
        if policy in ("shader", "truthful"):
            return f"bid {self._scripted_bid(player, policy, self.round, self.budget[player])}"
        return super().policy_action(player, policy, rng, pending)

    def oracle_action(self, player: str, pending: Mapping[str, Any]) -> str:
        """Reads the sealed bids already in and predicts the rest (and every later round) as
        the shader's, then plays the plan — which of the remaining items to win, each by
        outbidding the rivals by 1 — that first makes it finish strictly ahead of every rival
        and then earns the most. With more than 8 rounds left it plans the next 8."""
        c = self.config
        remaining = list(range(self.round, min(c.rounds, self.round + 8)))
        best_key: tuple[bool, float, float] | None = None
        best_bid = 0
        for size in range(len(remaining) + 1):
            for chosen in itertools.combinations(remaining, size):
                outcome = self._simulate(player, set(chosen), pending, remaining)
                if outcome is None:
                    continue
                mine, rival, bid_now = outcome
                key = (mine > rival, mine - rival, mine)
                if best_key is None or key > best_key:
                    best_key, best_bid = key, bid_now
        return f"bid {best_bid}"

    def _simulate(
        self, player: str, chosen: set[int], pending: Mapping[str, Any], rounds: list[int]
    ) -> tuple[float, float, int] | None:
        """Play ``rounds`` with ``player`` winning exactly the rounds in ``chosen`` (by the
        smallest winning bid) against shader rivals; ``None`` if the budget does not allow it.
        Returns (its final profit, the best rival's final profit, its bid this round)."""
        c = self.config
        budget = dict(self.budget)
        profit = dict(self.scores)
        rivals = [p for p in self.live if p != player]
        bid_now = 0
        for index in rounds:
            bids = {
                p: int(pending[p])
                if index == self.round and p in pending
                else self._scripted_bid(p, "shader", index, budget[p])
                for p in rivals
            }
            top = max(bids.values(), default=0)
            if index in chosen:
                ahead = [self.players.index(p) for p, b in bids.items() if b == top]
                order = self.instance.tie_order[index]
                wins_tie = top > 0 and order.index(self.players.index(player)) < min(
                    (order.index(i) for i in ahead), default=len(order)
                )
                bid = max(1, top if wins_tie else top + 1)
                if bid > budget[player]:
                    return None
                price = bid if c.pricing == "first" else top
                budget[player] -= price
                profit[player] += self.value(player, index) - price
                if index == self.round:
                    bid_now = bid
                continue
            if top == 0:
                continue
            winner = next(
                self.players[i]
                for i in self.instance.tie_order[index]
                if bids.get(self.players[i]) == top
            )
            second = sorted(bids.values(), reverse=True)[1] if len(bids) > 1 else 0
            price = top if c.pricing == "first" else second
            budget[winner] -= price
            profit[winner] += self.value(winner, index) - price
        return profit[player], max((profit[p] for p in rivals), default=0.0), bid_now


# ---------------------------------------------------------------------- PettingZoo
raw_env, parallel_env, env = pettingzoo_api(AuctionGame, "The auction")
AuctionVersusConfig = versus_config(AuctionConfig, AuctionGame, max_players=6)


class AuctionEnv(VersusEnv):
    """Outbid scripted rivals in a sealed-bid auction by working out how they bid.

    ## Description
    The single-agent view of the multi-agent game `llmgym.envs.multiagent.auction`
    (PettingZoo: `raw_env`, `env()`, and `parallel_env`, where every bidder moves at once). Five
    items are sold one per round to three bidders. Each bidder has private values for the
    items (drawn from 10-100, then scaled so that every bidder's values add up to 275: no seat
    is favoured by the draw) and a budget of 150 for the whole auction; every round all bid at
    the same time, the highest bid wins and pays its bid (first-price; `pricing="second"` makes
    it a Vickrey auction), and then every bid is revealed. The default rivals, `shader`, each bid a
    fixed share of their value, between 50% and 90%; the share is a private type drawn per task
    and can be inferred from the revealed bids, which is what it takes to win items cheaply.
    `truthful` rivals bid their value; `oracle` rivals read everybody's values; `random` rivals
    bid at random up to their value.

    ## Action Space
    Text: `bid <amount>`, a whole number from 0 to your budget left (`0` or `pass` passes; a
    bare number works too).

    ## Observation Space
    Text: your values for every item, your budget and profit, the result of every past round
    (all bids, the winner and the price) and the item now up for sale.

    ## Rewards
    When you win an item: its value to you minus the price (negative if you overpay); 0 for
    rounds you do not win; a forfeit sets your total to -1.

    ## Starting State
    Round 1, full budgets, no results yet.

    ## Episode End
    Terminates after the last round (or a forfeit). Success (`info["success"]`) means ending
    with a strictly higher total profit than every rival. An invalid bid (not a whole number,
    more than your budget) changes nothing and is answered with feedback. Truncated by the
    table's turn limit (30 steps).

    ## Arguments
    `gymnasium.make("llmgym/Auction-v0", players=4, rounds=8, pricing="second")`; see
    `AuctionVersusConfig`. `opponent=` also accepts an llmgym `Agent` (e.g. an
    `OpenAIChatAgent`), which then bids in every rival seat from its own prompts.
    `reset(options=...)` takes `task_id`, `split` and `config`.

    ## Version History
    * v0: Initial version.
    """

    raw_env_class = raw_env
    config_class = AuctionVersusConfig
