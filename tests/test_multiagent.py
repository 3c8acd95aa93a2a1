"""The multi-agent games through PettingZoo's own tests, the referee's invalid-move policy for
every player, the single-agent view, and matches between agents (scripted and LLM agents
served by a real local chat-completions server)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from tests.extras import need

need("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from llmgym import cli
from llmgym.agents import OpenAIChatAgent, make_agent
from llmgym.envs import game_entries
from llmgym.envs.multiagent import auction, connect_four, negotiation
from llmgym.envs.multiagent.api import TextObservation
from llmgym.runner import matches
from llmgym.runner.evaluation import evaluate
from llmgym.runner.matches import game_env_class, make_player, run_match
from llmgym.testing import hostile_actions
from tests.chat_server import ChatServer

MODULES = [connect_four, negotiation, auction]
IDS = [module.__name__.rsplit(".", 1)[1] for module in MODULES]
POLICIES = [{}, {"invalid_move_policy": "default_move", "invalid_move_retries": 0}]


def _quiet(function, *args, **kwargs):
    """PettingZoo's tests warn that text is not a NumPy array; that is the point here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
@pytest.mark.parametrize("config", POLICIES, ids=["forfeit", "default_move"])
def test_pettingzoo_api_tests(module, config) -> None:
    _quiet(api_test, module.env(**config), num_cycles=100)
    _quiet(parallel_api_test, module.parallel_env(**config), num_cycles=100)
    _quiet(seed_test, lambda: module.env(**config), num_cycles=50)
    _quiet(parallel_seed_test, lambda: module.parallel_env(**config), num_cycles=50)


def test_games_are_found_by_name_version_or_single_agent_id() -> None:
    games = game_entries()
    assert {module.__name__.rsplit(".", 1)[1] for module in MODULES} == set(games)
    for name, entry in games.items():
        assert entry.entry_point.startswith(f"llmgym.envs.multiagent.{name}:")
        assert game_env_class(name).metadata["name"] == f"{name}_v0"
    assert game_env_class("llmgym/ConnectFour-v0") is connect_four.raw_env
    assert game_env_class("auction_v0") is auction.raw_env
    with pytest.raises(ValueError, match="single-agent environment"):
        game_env_class("llmgym/Maze-v0")
    with pytest.raises(ValueError, match="unknown game 'chess'; choose from: connect_four"):
        game_env_class("chess")


def _play_random(env, seed: int) -> list[tuple]:
    """A full game of random valid moves; the trace of everything every agent saw."""
    env.reset(seed=seed, options={"split": "eval"})
    rng = np.random.default_rng(seed)
    trace = []
    for agent in env.agent_iter(500):
        observation, reward, terminated, truncated, info = env.last()
        trace.append(
            (agent, str(observation), reward, terminated, json.dumps(info, sort_keys=True))
        )
        if terminated or truncated:
            env.step(None)
        else:
            env.step(env.unwrapped.game.sample_action(agent, rng))
    return trace


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_random_valid_games_finish_and_are_reproducible(module) -> None:
    for seed in range(3):
        first, second = _play_random(module.env(), seed), _play_random(module.env(), seed)
        assert first == second
        final = {agent: terminated for agent, _, _, terminated, _ in first[-len(first) // 4 :]}
        assert all(final.values())


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_task_options_and_splits(module) -> None:
    env = module.raw_env()
    train, eval_ = env.task_ids("train"), env.task_ids("eval")
    assert len(train) and len(eval_) and not set(train[:500]) & set(eval_[:500])
    signatures = {}
    for split, ids in (("train", train), ("eval", eval_)):
        signatures[split] = set()
        for task_id in list(ids)[:40]:
            env.reset(options={"task_id": task_id})
            signatures[split].add(env.game.instance_key())
            assert env.infos["player_0"]["task_id"] == task_id
    assert not signatures["train"] & signatures["eval"]
    env.reset(seed=5, options={"split": "eval"})
    assert env.infos["player_0"]["split"] == "eval"
    with pytest.raises(ValueError, match="not a task"):
        env.reset(options={"task_id": "eval/99999999"})
    with pytest.raises(ValueError, match="split"):
        env.reset(options={"split": "test"})
    with pytest.warns(UserWarning, match="unknown key"):
        env.reset(options={"taskid": "eval/00001"})


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_observations_are_text_in_their_spaces(module) -> None:
    env = module.parallel_env()
    observations, infos = env.reset(seed=1)
    for agent, observation in observations.items():
        assert isinstance(observation, str) and isinstance(observation, TextObservation)
        assert type(str(observation)) is str
        assert env.observation_space(agent).contains(observation)
        assert infos[agent]["instruction"]


def _snapshot(env) -> tuple:
    """Everything any player can see, and the hidden state."""
    referee = env.referee
    return (
        {agent: env.game.observe(agent) for agent in env.possible_agents},
        env.game.render(),
        dict(referee.pending),
        dict(env.game.scores),
    )


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_hostile_actions_from_every_player_change_nothing(module) -> None:
    """Each player in turn sends hostile actions (with unlimited retries): each is invalid with
    feedback for that player only, nobody's state changes, and the game then goes on exactly
    as it would have."""
    actions = hostile_actions(60, seed=3)
    clean = module.raw_env(invalid_move_retries=None)
    noisy = module.raw_env(invalid_move_retries=None)
    clean.reset(seed=0, options={"task_id": "eval/00002"})
    noisy.reset(seed=0, options={"task_id": "eval/00002"})
    attacked: set[str] = set()
    for _ in range(12):
        if not noisy.agents or noisy.terminations[noisy.agent_selection]:
            break
        agent = noisy.agent_selection
        before = _snapshot(noisy)
        for action in actions[:20] if agent not in attacked else actions[20:25]:
            noisy.step(action)
            assert noisy.agent_selection == agent
            assert noisy.infos[agent]["invalid_action"] is True
            assert noisy.rewards[agent] == 0
            feedback = noisy.observe(agent)
            assert feedback.startswith("Invalid move:") and noisy.observation_space(agent).contains(
                feedback
            )
            after = _snapshot(noisy)
            assert after[1:] == before[1:]
            assert {a: o for a, o in after[0].items()} == before[0]
        attacked.add(agent)
        move = noisy.game.oracle_action(agent, noisy.referee.pending)
        assert clean.agent_selection == agent
        clean.step(move)
        noisy.step(move)
        assert _snapshot(clean) == _snapshot(noisy)
        assert noisy.infos[agent]["invalid_action"] is False
    assert attacked == set(module.raw_env().possible_agents) or clean.game.finished


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_running_out_of_retries_forfeits_without_touching_the_others(module) -> None:
    env = module.raw_env(invalid_move_retries=2)
    env.reset(seed=0, options={"task_id": "eval/00001"})
    first = env.agent_selection
    env.step(env.game.oracle_action(first, env.referee.pending))
    offender = env.agent_selection
    others_before = {
        agent: env.game.observe(agent) for agent in env.possible_agents if agent != offender
    }
    pending_before = dict(env.referee.pending)
    for left in (1, 0):
        env.step("not a move at all")
        assert env.infos[offender]["retries_left"] == left
        assert f"({left} retr" in env.observe(offender)
    assert {a: env.game.observe(a) for a in others_before} == others_before
    env.step("still not a move")
    assert env.terminations[offender]
    assert env.infos[offender]["forfeited"] and env._cumulative_rewards[offender] == -1.0
    assert "forfeit" in env.observe(offender)
    if module is auction:  # three bidders: the others bid on, the sealed bid stays in
        assert not env.game.finished and offender not in env.game.live
        assert env.referee.pending == pending_before == {first: env.referee.pending[first]}
        env.step(None)  # the forfeiter's dead step
        assert env.agent_selection == "player_2" and "player_1" not in env.agents
        env.step("bid 1")
        assert env.game.results[0].bids == {**pending_before, "player_2": 1}
    else:
        assert env.game.finished
        winner = next(a for a in env.possible_agents if a != offender)
        assert env.game.outcome(winner) == "win"


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_default_move_policy_plays_on(module) -> None:
    env = module.raw_env(invalid_move_retries=0, invalid_move_policy="default_move")
    env.reset(seed=0, options={"task_id": "eval/00001"})
    player = env.agent_selection
    env.step("gibberish")
    ruling = env.referee.last_ruling[player]
    assert ruling.defaulted and not ruling.forfeited and not env.terminations[player]
    assert env.infos[player]["invalid_action"] is True
    assert "default move was played" in env.observe(player)
    assert env.referee.invalid_moves[player] == 1


def test_parallel_turn_based_game_uses_only_the_mover() -> None:
    env = connect_four.parallel_env()
    observations, infos = env.reset(seed=0, options={"task_id": "eval/00000"})
    mover = next(a for a in env.agents if infos[a]["to_act"])
    waiting = next(a for a in env.agents if a != mover)
    observations, rewards, _, _, infos = env.step({mover: "d", waiting: "a"})
    assert "dropped a disc in column d" in observations[waiting]
    assert infos[waiting]["to_act"] and not infos[mover]["to_act"]
    observations, _, _, _, infos = env.step({mover: "b"})  # no action for the player to move
    assert infos[waiting]["invalid_action"] and "No action was given" in observations[waiting]


def test_parallel_auction_holds_valid_bids_while_one_bidder_retries() -> None:
    env = auction.parallel_env()
    observations, _ = env.reset(seed=0, options={"task_id": "eval/00000"})
    _, rewards, _, _, infos = env.step(
        {"player_0": "bid 30", "player_1": "bid a lot", "player_2": "bid 20"}
    )
    assert infos["player_1"]["invalid_action"] and infos["player_1"]["to_act"]
    assert not infos["player_0"]["to_act"] and env.game.round == 0
    assert env.referee.pending == {"player_0": 30, "player_2": 20}
    observations, rewards, _, _, _ = env.step({"player_0": "bid 99", "player_1": "bid 10"})
    result = env.game.results[0]
    assert result.bids == {"player_0": 30, "player_1": 10, "player_2": 20}
    assert result.winner == "player_0" and result.price == 30
    assert rewards["player_0"] == env.game.value("player_0", 0) - 30
    assert "player_0 won and paid 30" in observations["player_2"]


# ---------------------------------------------------------------------- single-agent view
def test_versus_env_seats_are_fixed_per_task_and_configurable() -> None:
    env = gym.make("llmgym/ConnectFour-v0").unwrapped
    seats = set()
    for index in range(12):
        env.reset(seed=index, options={"task_id": f"eval/{index:05d}"})
        first = env.seat
        env.reset(seed=index + 100, options={"task_id": f"eval/{index:05d}"})
        assert env.seat == first
        seats.add(first)
    assert seats == {"player_0", "player_1"}
    env = gym.make("llmgym/ConnectFour-v0", seat="player_1").unwrapped
    observation, _ = env.reset(seed=0, options={"task_id": "eval/00000"})
    assert env.seat == "player_1" and "You are O (player_1)" in observation
    assert "dropped a disc" in observation  # the opponent (X, first) has moved already
    with pytest.raises(llmgym_config_error(), match="seat"):
        gym.make("llmgym/Auction-v0", players=2, seat="player_4")


def llmgym_config_error():
    from llmgym import ConfigError

    return ConfigError


def test_versus_env_agent_retries_forfeit_when_set() -> None:
    env = gym.make("llmgym/ConnectFour-v0", agent_invalid_move_retries=1).unwrapped
    env.reset(seed=0, options={"task_id": "eval/00003"})
    _, reward, terminated, _, info = env.step("z")
    assert info["invalid_action"] and not terminated and info["retries_left"] == 0
    _, reward, terminated, _, info = env.step("zz")
    assert terminated and reward == -1.0 and not info["success"] and info["outcome"] == "loss"


def test_versus_env_reports_outcome_and_score() -> None:
    env = gym.make("llmgym/Negotiation-v0").unwrapped
    env.reset(seed=0, options={"task_id": "eval/00004"})
    total = 0.0
    while True:
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        total += reward
        if terminated or truncated:
            break
    assert info["success"] and info["score"] == total and info["outcome"] in ("win", "draw", "loss")
    assert 2 * total >= 10


def test_opponent_name_or_agent() -> None:
    env = gym.make("llmgym/ConnectFour-v0", opponent="random").unwrapped
    assert env.config.opponent == "random" and "'random' player" in (
        env.reset(seed=0) and env.rules()
    )
    with pytest.raises(llmgym_config_error(), match="opponent"):
        gym.make("llmgym/ConnectFour-v0", opponent="grandmaster")
    env = gym.make("llmgym/ConnectFour-v0", opponent=make_agent("oracle", react=False)).unwrapped
    env.reset(seed=0)
    assert "llmgym agents" in env.rules()


@pytest.mark.parametrize(
    "env_id", ["llmgym/ConnectFour-v0", "llmgym/Negotiation-v0", "llmgym/Auction-v0"]
)
def test_single_agent_ids_run_in_the_react_evaluation_loop(env_id: str) -> None:
    result = evaluate(env_id, make_agent("oracle"), episodes=6, progress=False)
    summary = result.summary()
    assert summary["episodes"] == 6 and summary["success_rate"] >= 0.8
    assert summary["format_errors"] == 0 and summary["errors"] == 0
    prompt = result.trajectories[0].system_prompt
    assert "Reply in exactly this format" in prompt and "The other seats are played by" in prompt


# ---------------------------------------------------------------------- matches
def test_scripted_match_standings_add_up() -> None:
    agents = [make_player("oracle", "connect_four"), make_player("greedy", "connect_four", seed=1)]
    result = run_match("connect_four", agents, games=8, seed=3, progress=False)
    rows = {row["agent"]: row for row in result.standings()}
    assert rows["oracle"]["games"] == rows["greedy"]["games"] == 8
    assert rows["oracle"]["wins"] == rows["greedy"]["losses"] >= 6
    low, high = rows["oracle"]["win_ci95"]
    assert 0 < low <= rows["oracle"]["win_rate"] <= high <= 1
    seats = [record.seats for record in result.games]
    assert seats[0] == {"player_0": "oracle", "player_1": "greedy"}
    assert seats[1] == {"player_0": "greedy", "player_1": "oracle"}
    assert result.games[0].task_id == result.games[1].task_id != result.games[2].task_id
    again = run_match("connect_four", agents, games=8, seed=3, concurrency=3, progress=False)
    assert [r.to_dict() for r in again.games] == [r.to_dict() for r in result.games]


def test_match_needs_one_agent_per_seat_and_known_players() -> None:
    with pytest.raises(ValueError, match="3 players"):
        run_match("auction", [make_agent("random"), make_agent("random")], games=1)
    with pytest.raises(ValueError, match="unknown player"):
        make_player("grandmaster", "negotiation")
    assert make_player("conceder", "negotiation").name == "conceder"


def _connect_four_model(messages: list[dict]) -> str:
    """A 'model' that plays the leftmost playable column, but first answers every game without
    an Action: line once (a format error the referee must absorb)."""
    replies = sum(1 for m in messages if m["role"] == "assistant")
    if replies == 0:
        return "Let me think about the board."
    playable = re.findall(r"Columns you can play: ([a-z, ]+)\.", messages[-1]["content"])
    column = playable[-1].split(", ")[0] if playable else "a"
    return f"Thought: the leftmost open column.\nAction: {column}"


def test_self_play_between_two_openai_agents_on_a_local_server() -> None:
    with ChatServer(_connect_four_model) as server:
        agents = [
            OpenAIChatAgent("alpha", base_url=server.base_url, max_retries=0),
            OpenAIChatAgent("beta", base_url=server.base_url, max_retries=0),
        ]
        result = run_match(
            "connect_four", agents, games=2, seed=0, progress=False, keep_messages=True
        )
    rows = {row["agent"]: row for row in result.standings()}
    assert set(rows) == {"openai:alpha", "openai:beta"}
    assert all(record.error is None for record in result.games)
    assert sum(rows[a]["wins"] + rows[a]["draws"] + rows[a]["losses"] for a in rows) == 4
    assert all(rows[a]["format_errors"] == 2 and rows[a]["invalid_moves"] == 2 for a in rows)
    assert all(rows[a]["tokens"] > 0 for a in rows)
    models = {request["body"]["model"] for request in server.requests}
    assert models == {"alpha", "beta"}
    record = result.games[0]
    conversation = record.messages["player_0"]
    assert conversation[0]["role"] == "system" and "Connect Four" in conversation[0]["content"]
    assert conversation[1]["content"].startswith("Your task: Play Connect Four")
    assert "Format error" in conversation[3]["content"]
    moves = sum(record.moves for record in result.games)
    assert len(server.requests) == moves


def test_single_agent_env_against_an_openai_opponent() -> None:
    with ChatServer(_connect_four_model) as server:
        opponent = OpenAIChatAgent("rival", base_url=server.base_url, max_retries=0)
        env = gym.make("llmgym/ConnectFour-v0", opponent=opponent, seat="player_0").unwrapped
        env.reset(seed=0, options={"task_id": "eval/00000"})
        while True:
            observation, _, terminated, truncated, info = env.step(env.oracle_action())
            if terminated or truncated:
                break
    assert info["success"] and "You won" in observation
    assert server.requests and all(r["body"]["model"] == "rival" for r in server.requests)


def test_match_and_eval_commands(tmp_path, capsys) -> None:
    out = tmp_path / "match.json"
    code = cli.main(
        ["match", "negotiation", "--agents", "oracle", "conceder", "--games", "4", "--quiet",
         "--json", str(out), "--transcripts", str(tmp_path / "games.jsonl")]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0 and "negotiation_v0: 4 games" in printed and "win_ci95" in printed
    payload = json.loads(out.read_text())
    assert [row["agent"] for row in payload["standings"]] == ["oracle", "conceder"]
    assert len(payload["per_game"]) == 4
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    assert len(lines) == 4 and "messages" in json.loads(lines[0])
    code = cli.main(
        ["eval", "llmgym/ConnectFour-v0", "--agent", "oracle", "--opponent", "cautious",
         "--episodes", "4", "--quiet"]
    )  # fmt: skip
    assert code == 0 and "llmgym/ConnectFour-v0" in capsys.readouterr().out
    assert cli.main(["eval", "llmgym/Maze-v0", "--opponent", "random", "--quiet"]) == 2
    code = cli.main(
        ["eval", "connect_four", "--agents", "oracle", "random", "--episodes", "4", "--quiet"]
    )
    assert code == 0 and "connect_four_v0: 4 games" in capsys.readouterr().out
    assert cli.main(["eval", "--suite", "smoke", "--agents", "oracle", "random"]) == 2
    assert cli.main(["match", "auction", "--agents", "oracle", "random", "--quiet"]) == 2


def _interrupt_game(monkeypatch, after: int) -> None:
    """Ctrl-C while the game after the first ``after`` is being played."""
    play, played = matches.play_game, itertools.count()

    def interrupted(*args, **kwargs):
        if next(played) == after:
            raise KeyboardInterrupt
        return play(*args, **kwargs)

    monkeypatch.setattr(matches, "play_game", interrupted)


def test_ctrl_c_in_a_match_keeps_the_standings_of_the_finished_games(
    tmp_path, capsys, monkeypatch
) -> None:
    _interrupt_game(monkeypatch, 3)
    out = tmp_path / "match.json"
    argv = ["match", "negotiation", "--agents", "oracle", "conceder", "--games", "8", "--quiet"]
    assert cli.main([*argv, "--json", str(out)]) == cli.EXIT_INTERRUPTED
    captured = capsys.readouterr()
    assert "negotiation_v0: 3 games" in captured.out and "win_ci95" in captured.out
    assert "interrupted; the standings" in captured.err and "3 finished games of 8" in captured.err
    payload = json.loads(out.read_text())
    assert payload["interrupted"] is True and len(payload["per_game"]) == 3
    assert sum(row["games"] for row in payload["standings"]) == 6  # two seats a game
    _interrupt_game(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):  # the library raises unless asked to stop
        run_match("negotiation", [make_agent("oracle"), make_agent("oracle")], progress=False)


DOCS = Path(__file__).resolve().parent.parent / "docs"
SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Starting State",
    "Episode End",
    "Arguments",
    "Version History",
)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_every_game_has_a_page_with_its_sections_and_knobs(module) -> None:
    name = module.__name__.rsplit(".", 1)[1]
    page = DOCS / "environments" / "multiagent" / f"{name}.md"
    text = page.read_text()
    assert text.startswith(f"# {name}_v0\n")
    for section in SECTIONS:
        assert f"## {section}" in text, f"{page.name} lacks {section!r}"
    for field in dataclasses.fields(module.raw_env.game_class.config_class):
        assert f"| `{field.name}` |" in text, f"{page.name} does not document {field.name}"
    assert f"environments/multiagent/{name}.md" in (DOCS / "multiagent.md").read_text()
