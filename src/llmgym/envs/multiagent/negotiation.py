"""Negotiation: two players with private valuations split a pool of items by talking and
proposing, within a turn limit (the Deal-or-No-Deal setting of Lewis et al., 2017).

PettingZoo conventions: ``env()`` (AEC, order-enforced), ``raw_env`` and ``parallel_env``;
:class:`NegotiationEnv` is the single-agent environment ``llmgym/Negotiation-v0``.
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
from llmgym.core.text import join_names
from llmgym.envs.multiagent.api import pettingzoo_api
from llmgym.envs.multiagent.game import Game, GameConfig
from llmgym.envs.multiagent.versus import VersusEnv, versus_config
from llmgym.errors import IllegalMove

__all__ = [
    "NegotiationConfig",
    "NegotiationEnv",
    "NegotiationGame",
    "NegotiationVersusConfig",
    "env",
    "parallel_env",
    "raw_env",
]

ITEMS = (("book", "books"), ("hat", "hats"), ("ball", "balls"), ("pen", "pens"), ("lamp", "lamps"))
_SAY = re.compile(r"^\s*(?:say|message|tell)\b\s*:?\s*", re.IGNORECASE)
_PROPOSE = re.compile(
    r"^(?:i )?(?:propose|proposal|offer)\b[ :]*(?:to keep |that i keep |i keep )?"
)
_COUNT_FIRST = re.compile(r"([0-9]+)\s*(?:x\s*)?([a-z]+)")
_NAME_FIRST = re.compile(r"([a-z]+)\s*[:=]\s*([0-9]+)")
_OTHER_SIDE = re.compile(r"\b(?:you|your|they|them|their|other|opponent|player)\b")
_CANNED = (
    "What matters most to you?",
    "I could give up some items if you meet me halfway.",
    "Let us find a split that works for both of us.",
)


@dataclass(frozen=True)
class NegotiationConfig(GameConfig):
    """The pool, the valuations and the turn limit of the negotiation."""

    item_types: int = knob(3, low=2, high=5, doc="Kinds of items in the pool (books, hats, ...).")
    max_count: int = knob(4, low=1, high=6, doc="Most items of one kind in the pool.")
    total_value: int = knob(10, low=4, high=100, doc="What the whole pool is worth to each player.")
    max_turns: int = knob(
        10,
        low=2,
        high=40,
        doc="Turns (messages, proposals, acceptances) of both players together; "
        "the game ends without a deal after the last one.",
    )
    max_message_length: int = knob(
        500, low=20, high=4000, doc="Longest message (characters) a player may send."
    )


@dataclass(frozen=True)
class _Instance:
    counts: tuple[int, ...]
    values: tuple[tuple[int, ...], tuple[int, ...]]


def _value(values: tuple[int, ...], share: tuple[int, ...]) -> int:
    return sum(v * n for v, n in zip(values, share, strict=True))


@bounded_cache(256)
def _splits(counts: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every share one player can keep (the other gets the rest)."""
    return tuple(itertools.product(*(range(n + 1) for n in counts)))


@dataclass(frozen=True)
class _Option:
    """One way to split the pool, seen by the player who keeps ``share``."""

    share: tuple[int, ...]
    rest: tuple[int, ...]
    mine: int
    theirs: int


@bounded_cache(1024)
def _options(
    counts: tuple[int, ...], mine: tuple[int, ...], theirs: tuple[int, ...]
) -> tuple[_Option, ...]:
    """Every split with its worth to both sides (``mine`` keeps ``share``)."""
    options = []
    for share in _splits(counts):
        rest = tuple(n - k for n, k in zip(counts, share, strict=True))
        options.append(_Option(share, rest, _value(mine, share), _value(theirs, rest)))
    return tuple(options)


def _valuation(rng: TaskRng, counts: tuple[int, ...], total: int) -> tuple[int, ...] | None:
    values = [0] * len(counts)
    remaining = total
    while remaining:
        fitting = [i for i, n in enumerate(counts) if n <= remaining]
        if not fitting:
            return None
        pick = rng.choice(fitting)
        values[pick] += 1
        remaining -= counts[pick]
    return tuple(values)


def _fair_split_exists(instance: _Instance, total: int) -> bool:
    options = _options(instance.counts, *instance.values)
    return any(2 * o.mine >= total and 2 * o.theirs >= total for o in options)


@bounded_cache(4096)
def _generate(env_name: str, task_id: str, split: str, config: NegotiationConfig) -> _Instance:
    """The pool and valuations of ``task_id``: the first candidate (by attempt) in which every
    kind is worth something to someone, the players' valuations differ, a split giving both at
    least half exists, and whose content hashes into ``split``."""
    attempt = 0
    while True:
        rng = TaskRng(env_name, task_id, attempt)
        attempt += 1
        counts = tuple(rng.randint(1, config.max_count) for _ in range(config.item_types))
        first = _valuation(rng, counts, config.total_value)
        second = _valuation(rng, counts, config.total_value)
        if first is None or second is None or first == second:
            continue
        if any(a == 0 and b == 0 for a, b in zip(first, second, strict=True)):
            continue
        instance = _Instance(counts, (first, second))
        if not _fair_split_exists(instance, config.total_value):
            continue
        if split_of(f"{counts}|{first}|{second}") == split:
            return instance


class NegotiationGame(Game[NegotiationConfig]):
    """Rules of the negotiation for :class:`raw_env`, :class:`parallel_env` and
    :class:`NegotiationEnv`."""

    name = "negotiation"
    config_class = NegotiationConfig
    policies = ("random", "conceder", "boulware", "oracle")
    default_policy = "conceder"
    example = (
        "Observation: Pool: 3 books, 2 hats, 1 ball. Your values: book 1, hat 2, ball 3 "
        "(the pool is worth 10 to you). Standing proposal from player_1: player_1 keeps 3 "
        "books and 0 hats and 0 balls; you get 0 books, 2 hats and 1 ball (worth 7 to you).\n"
        "Thought: The books are worth little to me and the rest is worth 7 of 10. I accept.\n"
        "Action: accept"
    )

    @classmethod
    def task_ids(cls, split: str, config: NegotiationConfig) -> TaskIdRange:
        return TaskIdRange(split, 10_000 if split == "train" else 1_000)

    def __init__(self, task: Task[NegotiationConfig]) -> None:
        super().__init__(task)
        c = self.config
        instance = _generate(task.env_name, task.task_id, task.split, c)
        self.counts = instance.counts
        self.values = dict(zip(self.players, instance.values, strict=True))
        self.items = ITEMS[: c.item_types]
        self.turn = 0
        self.transcript: list[str] = []
        self.standing: tuple[str, tuple[int, ...]] | None = None
        self.deal: dict[str, tuple[int, ...]] | None = None
        self.ending = ""
        self.last_demand: dict[str, tuple[int, ...]] = {}

    # ------------------------------------------------------------------ rules
    def mover(self) -> str:
        return self.players[self.turn % 2]

    def other(self, player: str) -> str:
        return self.players[1 - self.players.index(player)]

    def to_act(self) -> list[str]:
        return [] if self.finished else [self.mover()]

    def parse(self, player: str, action: str) -> tuple[str, Any]:
        c = self.config
        said = _SAY.match(action)
        if said:
            message = " ".join(action[said.end() :].split())
            if not message:
                raise IllegalMove("the message is empty. Write 'say <your message>'.")
            if len(message) > c.max_message_length:
                raise IllegalMove(
                    f"the message has {len(message)} characters; at most "
                    f"{c.max_message_length} are allowed."
                )
            return ("say", message)
        text = normalize_command(action, max_length=400)
        if text.startswith("accept") or text in ("i accept", "deal", "i agree", "agree"):
            if self.standing is None or self.standing[0] == player:
                raise IllegalMove(
                    "there is no proposal from the other player to accept. " + self._grammar()
                )
            return ("accept", None)
        if text in ("walk away", "no deal", "i walk away", "quit"):
            return ("walk", None)
        proposal = _PROPOSE.match(text)
        if proposal:
            return ("propose", self._parse_share(text[proposal.end() :]))
        raise IllegalMove(f"{quote_action(action)} is not a move. {self._grammar()}")

    def _parse_share(self, text: str) -> tuple[int, ...]:
        example = self._share_text(self.counts[:1] + (0,) * (len(self.counts) - 1))
        grammar = (
            f"List the items you keep, e.g. 'propose {example}'; the other player gets the rest."
        )
        if _OTHER_SIDE.search(text):
            raise IllegalMove(f"a proposal lists only the items you keep. {grammar}")
        pairs = [(int(n), word) for n, word in _COUNT_FIRST.findall(text)]
        pairs += [(int(n), word) for word, n in _NAME_FIRST.findall(text)]
        if not pairs:
            raise IllegalMove(f"the proposal names no items. {grammar}")
        share = [0] * len(self.counts)
        seen: set[int] = set()
        for amount, word in pairs:
            kind = self._kind(word)
            if kind is None:
                names = join_names(plural for _, plural in self.items)
                raise IllegalMove(f"there are no {word!r} in the pool; the items are {names}.")
            if kind in seen:
                raise IllegalMove(f"the proposal names {self.items[kind][1]} twice. {grammar}")
            if amount > self.counts[kind]:
                raise IllegalMove(
                    f"the pool has only {self.counts[kind]} {self._noun(kind, self.counts[kind])}."
                )
            seen.add(kind)
            share[kind] = amount
        return tuple(share)

    def _kind(self, word: str) -> int | None:
        for index, names in enumerate(self.items):
            if word in names:
                return index
        return None

    def apply(self, moves: Mapping[str, Any]) -> dict[str, float]:
        player = self.mover()
        kind, payload = moves[player]
        rewards: dict[str, float] = {}
        if kind == "say":
            self.transcript.append(f'{player} said: "{payload}"')
        elif kind == "pass":
            self.transcript.append(f"{player} said nothing.")
        elif kind == "propose":
            self.standing = (player, payload)
            self.last_demand[player] = payload
            self.transcript.append(f"{player} proposed: {self._proposal_text(player, payload)}.")
        elif kind == "accept":
            assert self.standing is not None
            proposer, share = self.standing
            self.deal = {proposer: share, player: self._rest(share)}
            self.transcript.append(f"{player} accepted {proposer}'s proposal.")
            self.finished = True
            self.ending = "deal"
            rewards = {p: float(_value(self.values[p], self.deal[p])) for p in self.players}
        elif kind == "walk":
            self.transcript.append(f"{player} walked away.")
            self.finished = True
            self.ending = f"{player} walked away: no deal"
        self.turn += 1
        if not self.finished and self.turn >= self.config.max_turns:
            self.finished = True
            self.ending = "the turns ran out: no deal"
        return rewards

    def eliminate(self, player: str) -> dict[str, float]:
        rewards = super().eliminate(player)
        self.transcript.append(f"{player} forfeited.")
        self.ending = f"{player} forfeited: no deal"
        return rewards

    def default_move(self, player: str, rng: np.random.Generator) -> tuple[str, Any]:
        return ("pass", None)

    # ------------------------------------------------------------------ text
    def _noun(self, kind: int, amount: int) -> str:
        singular, plural = self.items[kind]
        return singular if amount == 1 else plural

    def _share_text(self, share: tuple[int, ...]) -> str:
        return join_names([f"{n} {self._noun(k, n)}" for k, n in enumerate(share)])

    def _rest(self, share: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(n - k for n, k in zip(self.counts, share, strict=True))

    def _proposal_text(self, proposer: str, share: tuple[int, ...]) -> str:
        return (
            f"{proposer} keeps {self._share_text(share)}; {self.other(proposer)} gets "
            f"{self._share_text(self._rest(share))}"
        )

    def _grammar(self) -> str:
        return (
            "Moves: 'say <message>', 'propose <the items you keep>', 'accept' (the other "
            "player's standing proposal) or 'walk away'."
        )

    def _valuation_text(self, player: str) -> str:
        parts = [f"{self.items[k][0]} {v}" for k, v in enumerate(self.values[player])]
        return ", ".join(parts)

    def observe(self, player: str) -> str:
        c = self.config
        other = self.other(player)
        lines = [
            f"You are {player}, negotiating with {other}.",
            f"Pool: {self._share_text(self.counts)}.",
            f"Your values per item: {self._valuation_text(player)} (the whole pool is worth "
            f"{c.total_value} to you). {other}'s values are hidden; the pool is worth "
            f"{c.total_value} to them too.",
        ]
        if self.transcript:
            lines.append("Conversation so far:")
            lines += self._recent_transcript()
        lines += [self._outcome_text(player)] if self.finished else self._turn_lines(player)
        return "\n".join(lines)

    def _outcome_text(self, player: str) -> str:
        """How the finished negotiation ended for ``player``."""
        if self.deal is None:
            return f"Game over: {self.ending}. Nobody gets any items."
        mine = self.deal[player]
        return (
            f"Deal: you get {self._share_text(mine)}, worth "
            f"{_value(self.values[player], mine)} to you."
        )

    def _turn_lines(self, player: str) -> list[str]:
        """The standing proposal, if any, as ``player`` sees it, and whose turn it is."""
        lines: list[str] = []
        if self.standing is not None:
            proposer, share = self.standing
            yours = share if proposer == player else self._rest(share)
            lines.append(
                f"Standing proposal from {proposer}: {self._proposal_text(proposer, share)} "
                f"(you would get items worth {_value(self.values[player], yours)} to you)."
            )
        left = self.config.max_turns - self.turn
        if self.mover() == player:
            lines.append(
                f"Your turn ({left} turn{'s' if left != 1 else ''} left for both of you "
                f"together). {self._grammar()}"
            )
        else:
            lines.append(f"Waiting for {self.other(player)} ({left} turns left).")
        return lines

    def _recent_transcript(self, budget: int = 12_000) -> list[str]:
        """The latest turns that fit in ``budget`` characters (long messages could otherwise
        push the standing proposal out of the observation)."""
        shown: list[str] = []
        used = 0
        for entry in reversed(self.transcript):
            used += len(entry) + 3
            if used > budget:
                hidden = len(self.transcript) - len(shown)
                shown.append(f"  ({hidden} earlier turn{'s' if hidden != 1 else ''} not shown)")
                break
            shown.append(f"  {entry}")
        return shown[::-1]

    def instruction(self, player: str) -> str:
        return (
            f"Negotiate with {self.other(player)} how to split the pool; get a deal worth as "
            "much as possible to you (at least half of what the pool is worth to you)."
        )

    @classmethod
    def rules(cls, config: NegotiationConfig) -> str:
        c = config
        names = join_names([plural for _, plural in ITEMS[: c.item_types]])
        return (
            f"Two players split a pool of items ({names}). Each player has private values "
            f"per item; the whole pool is worth {c.total_value} to each of them, but they value "
            f"the kinds differently. Players take turns (at most {c.max_turns} in total). On "
            f"your turn do one of: 'say <message>' to talk; 'propose <the items you keep>', "
            f"e.g. 'propose 2 books, 1 hat, 0 balls' (the other player gets the rest; it "
            f"replaces any earlier proposal); 'accept' to accept the other player's standing "
            f"proposal, which ends the game with that split; 'walk away' to end it without a "
            f"deal. Your score is what your share is worth to you; without a deal everybody "
            f"scores 0."
        )

    def render(self) -> str:
        lines = [
            f"Pool: {self._share_text(self.counts)}",
            *(f"{p} values: {self._valuation_text(p)}" for p in self.players),
            *self.transcript,
        ]
        if self.finished:
            lines.append(f"Over: {self.ending}; scores {self.scores}")
        return "\n".join(lines)

    def instance_key(self) -> str:
        return f"{self.counts}|{self.values[self.players[0]]}|{self.values[self.players[1]]}"

    # ------------------------------------------------------------------ players
    def success(self, player: str) -> bool:
        """A deal worth at least half the pool to ``player``."""
        if self.deal is None:
            return False
        worth = _value(self.values[player], self.deal[player])
        return 2 * worth >= self.config.total_value

    def sample_action(self, player: str, rng: np.random.Generator) -> str:
        choice = int(rng.integers(3))
        if choice == 0 and self.standing is not None and self.standing[0] != player:
            return "accept"
        if choice == 1:
            return f"say {_CANNED[int(rng.integers(len(_CANNED)))]}"
        splits = _splits(self.counts)
        return f"propose {self._share_text(splits[int(rng.integers(len(splits)))])}"

    def _aspiration(self, player: str, policy: str, turn: int) -> float:
        """The share of the pool's worth ``policy`` insists on at ``turn``: 0.9 at its first
        turn down to 0.5 at its last (linearly for the conceder, late for the boulware)."""
        own_turns = [t for t in range(self.config.max_turns) if self.players[t % 2] == player]
        progress = own_turns.index(turn) / max(1, len(own_turns) - 1)
        if policy == "boulware":
            progress = progress**3
        return 0.9 - 0.4 * progress

    def policy_action(
        self, player: str, policy: str, rng: np.random.Generator, pending: Mapping[str, Any]
    ) -> str:
        if policy not in ("conceder", "boulware"):
            return super().policy_action(player, policy, rng, pending)
        total = self.config.total_value
        wanted = self._aspiration(player, policy, self.turn) * total
        values = self.values[player]
        if self.standing is not None and self.standing[0] != player:
            share = self.standing[1]
            if _value(values, self._rest(share)) >= wanted:
                return "accept"
        other = self.other(player)
        demand = self.last_demand.get(other)
        wish = demand or (0,) * len(self.counts)

        def appeal(option: _Option) -> tuple[int, int, int]:
            overlap = sum(min(g, w) for g, w in zip(option.rest, wish, strict=True))
            return (overlap, sum(option.rest), option.mine)

        options = _options(self.counts, values, self.values[other])
        best = max((o for o in options if o.mine >= wanted), key=appeal)
        return f"propose {self._share_text(best.share)}"

    def oracle_action(self, player: str, pending: Mapping[str, Any]) -> str:
        """Reads the other player's values and assumes it is the conceder: proposes the split
        worth most to itself among those the other accepts on its next turn, unless waiting
        for a later turn (when the other asks less) or accepting the standing proposal is
        worth more."""
        other = self.other(player)
        mine, theirs = self.values[player], self.values[other]
        max_turns = self.config.max_turns
        total = self.config.total_value
        own_later = [t for t in range(self.turn, max_turns) if self.players[t % 2] == player]

        options = _options(self.counts, mine, theirs)

        def best_accepted_at(turn: int) -> tuple[int, tuple[int, ...]] | None:
            wanted = self._aspiration(other, "conceder", turn) * total
            accepted = [o for o in options if o.theirs >= wanted]
            if not accepted:
                return None
            best = max(accepted, key=lambda o: (o.mine, o.theirs, o.share))
            return best.mine, best.share

        plans = [
            (plan[0], turn, plan[1])
            for turn in own_later
            if turn + 1 < max_turns and (plan := best_accepted_at(turn + 1)) is not None
        ]
        standing = 0
        if self.standing is not None and self.standing[0] == other:
            standing = _value(mine, self._rest(self.standing[1]))
        best_later = max((worth for worth, _, _ in plans), default=0)
        if standing and standing >= best_later:
            return "accept"
        now = [plan for plan in plans if plan[1] == self.turn]
        if now and now[0][0] >= best_later:
            return f"propose {self._share_text(now[0][2])}"
        if plans:
            # anchor: a proposal the other will not accept yet, worth the most to us
            greedy = max(options, key=lambda o: (o.mine, -sum(o.share)))
            return f"propose {self._share_text(greedy.share)}"
        if self.standing is not None and self.standing[0] == other:
            return "accept"
        return "say Please make me an offer."


# ---------------------------------------------------------------------- PettingZoo
raw_env, parallel_env, env = pettingzoo_api(NegotiationGame, "The negotiation")
NegotiationVersusConfig = versus_config(NegotiationConfig, NegotiationGame, max_players=2)


class NegotiationEnv(VersusEnv):
    """Negotiate how to split a pool of items with an opponent whose values are hidden.

    ## Description
    The single-agent view of the multi-agent game `llmgym.envs.multiagent.negotiation`
    (PettingZoo: `raw_env`, `env()`, `parallel_env`), after the Deal-or-No-Deal task of Lewis
    et al. (2017). A pool holds 1-4 items of each of 3 kinds (books, hats, balls). Each player
    values the kinds differently and privately; the whole pool is worth 10 to each. Players
    alternate turns, at most 10 in total: they talk, propose splits and accept. Every pool has
    a split that gives both players at least half of its worth, so a good deal always exists,
    but finding it means reasoning about what the other player wants. The default opponent,
    `conceder`, insists on 90% of the pool's worth at its first turn and concedes linearly to
    50% at its last; it accepts any proposal that meets its current demand, otherwise proposes
    the split that meets it and gives the agent most of what the agent last asked for.
    `boulware` concedes late; `oracle` reads the agent's values; `random` plays at random.

    ## Action Space
    Text: `say <message>`; `propose <the items you keep>` such as
    `propose 2 books, 1 hat, 0 balls` (kinds left out count as 0; the other player gets the
    rest; `books=2` also works); `accept` (the opponent's standing proposal); `walk away`.

    ## Observation Space
    Text: the pool, your values, the conversation so far (messages and proposals, each with
    what both sides would get), the standing proposal with its worth to you, and the turns left.

    ## Rewards
    At the end: the worth of your share under your values (0-10) when a deal is made, 0
    without a deal, -1 for a forfeit.

    ## Starting State
    An empty conversation. If the opponent moves first, its opening proposal is shown.

    ## Episode End
    Terminates on `accept`, `walk away`, a forfeit, or after the last turn (no deal). Success
    (`info["success"]`) means a deal worth at least half of the pool to you (5 of 10 by
    default). An invalid move (unknown item, more items than the pool has, accepting when
    there is nothing to accept, an empty or too long message) changes nothing and is answered
    with feedback. Truncated by the table's turn limit (30 steps).

    ## Arguments
    `gymnasium.make("llmgym/Negotiation-v0", opponent="boulware", item_types=4, max_turns=12)`;
    see `NegotiationVersusConfig`. `opponent=` also accepts an llmgym `Agent` (e.g. an
    `OpenAIChatAgent`), which then negotiates from its own prompts. `reset(options=...)` takes
    `task_id`, `split` and `config`.

    ## Version History
    * v0: Initial version.
    """

    raw_env_class = raw_env
    config_class = NegotiationVersusConfig
