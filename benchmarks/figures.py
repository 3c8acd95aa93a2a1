"""The measured figures in the docs, rendered from ``benchmarks/results/*.json``.

``docs/generate.py`` writes what these functions return between markers in README.md and
docs/*.md and on every environment page, and ``python docs/generate.py --check`` (a test) fails
when a committed result and the docs disagree. A figure that no committed result holds is not
printed: a missing result reads "not run" or "not measured yet".
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llmgym.runner.evaluation import wilson_interval

RESULTS = Path(__file__).resolve().parent / "results"
NOT_MEASURED = "not measured yet"


def load(name: str) -> dict[str, Any] | None:
    """``benchmarks/results/<name>`` as JSON, or ``None`` when it was never written."""
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, with thousands separators: 29,800; 4.35."""
    rounded = float(f"{value:.{digits}g}")
    if abs(rounded) >= 10 ** (digits - 1):
        return f"{rounded:,.0f}"
    return f"{rounded:g}"


def short_name(env_id: str) -> str:
    """``llmgym/Wordle-v0`` -> ``Wordle``."""
    return env_id.split("/")[-1].rsplit("-", 1)[0]


def span(values: Iterable[float], fmt: str = "{:.0f}") -> str:
    """``low-high`` of ``values`` (one number when they agree once formatted)."""
    values = sorted(values)
    low, high = fmt.format(values[0]), fmt.format(values[-1])
    return low if low == high else f"{low}-{high}"


def _percent(value: float) -> str:
    """A percentage without decimals, ``<1%`` for a rate that rounds to 0 but is not 0."""
    return "<1%" if 0 < value < 0.5 else f"{value:.0f}%"


def _interval(rate: float, total: int) -> str:
    low, high = wilson_interval(round(rate * total), total)
    return f"{low:.0%}-{high:.0%}"


# README.md ------------------------------------------------------------------------------------

README_THROUGHPUT = (
    "llmgym/Wordle-v0",
    "llmgym/Maze-v0",
    "llmgym/TextCraft-v0",
    "llmgym/Household-v0",
    "llmgym/Heist-v0",
    "llmgym/SQL-v0",
)


def readme_speed() -> str:
    """The README's Speed table: one row per benchmark script, from its result JSON."""
    rows = ["| what | figure | script |", "|---|---|---|"]
    throughput = load("throughput.json")
    if throughput:
        by_id = {row["env_id"]: row for row in throughput["results"]}
        figure = " · ".join(
            f"{short_name(e)} {sig(by_id[e]['oracle_steps_per_s'])}"
            for e in README_THROUGHPUT
            if e in by_id
        )
        rows.append(f"| steps/s on one core (oracle actions) | {figure} | `throughput.py` |")
    crafter = load("crafter_speed.json")
    if crafter:
        speedups = crafter["speedups"]
        rows.append(
            "| Crafter (text) against Crafter itself | "
            f"reset {speedups['reset_speedup']:.0f}× faster, "
            f"step {speedups['text_step_speedup']:.0f}× faster | `crafter_speed.py` |"
        )
        rows.append(
            "| Crafter (pixels, the same frames) against Crafter itself | "
            f"step {speedups['pixel_step_speedup']:.1f}× faster | `crafter_speed.py` |"
        )
    batched = load("crafter_batched_speed.json")
    if batched:
        ratios = batched["ratios"]
        rows.append(
            "| Crafter for RL training (symbolic, 16 games in arrays) against the same games on "
            f"crafter's engine | {ratios['batched_16_over_vector_16']:.1f}× the steps/s "
            f"({sig(ratios['batched_16_over_crafter'])}× `crafter.Env`) "
            "| `crafter_batched_speed.py` |"
        )
    textworld = load("textworld_overhead.json")
    if textworld:
        rows.append(
            "| TextWorld through llmgym against TextWorld | "
            f"{textworld['step_overhead']:+.1%} per step | `textworld_overhead.py` |"
        )
    loop = load("agent_loop.json")
    if loop:
        overheads = [row["overhead_us"] for row in loop["wrapper_overhead"]]
        rows.append(
            f"| ReAct + chat-history wrappers | {span(overheads)} µs per step | `agent_loop.py` |"
        )
        delay = max(row["agent_delay_s"] for row in loop["rollout_scaling"])
        widest = max(
            (row for row in loop["rollout_scaling"] if row["agent_delay_s"] == delay),
            key=lambda row: row["concurrency"],
        )
        rows.append(
            f"| rollouts, agent answering in {delay * 1000:.0f} ms | "
            f"{widest['speedup']:.0f}× faster at {widest['concurrency']} concurrent episodes "
            "than at 1 | `agent_loop.py` |"
        )
    serving = load("serving.json")
    if serving:
        measured = serving["measured"]
        rows.append(
            f"| `llmgym serve` over WebSocket ({short_name(serving['env_id'])}) | "
            f"{measured['added_ms_at_1 (websocket)']:.2f} ms added per step; "
            f"{sig(measured['steps_per_s_at_64 (websocket)'])} steps/s at 64 sessions | "
            "`serving.py` |"
        )
    webshop = load("webshop_search.json")
    if webshop:
        every = next(row for row in webshop["results"] if row["query_set"] == "all")
        rows.append(
            f"| WebShop search over {webshop['catalogue']['products']:,} products | "
            f"{every['p50_ms']:.1f} ms median | `webshop_search.py` |"
        )
    return "\n".join(rows)


# docs/agenteval.md ----------------------------------------------------------------------------


def agenteval_baselines() -> str:
    """The oracle and random baselines on the AgentEval suite, and where the oracle falls short."""
    data = load("agenteval_baselines.json")
    if not data:
        return f"Baselines: {NOT_MEASURED} (run `python benchmarks/agenteval_baselines.py`)."
    rows = [
        "| environment | tasks | oracle success | oracle reward | random success | random reward |",
        "|---|---|---|---|---|---|",
    ]
    short = []
    for env_id, agents in data["baselines"].items():
        if not agents:
            rows.append(f"| `{env_id}` | — | not measured (extra not installed) | | | |")
            continue
        oracle, random = agents["oracle"], agents["random"]
        rows.append(
            f"| `{env_id}` | {oracle['episodes']} | {oracle['success_rate']:.1%} "
            f"| {oracle['mean_reward']:.3f} | {random['success_rate']:.1%} "
            f"| {random['mean_reward']:.3f} |"
        )
        failed = oracle["episodes"] - round(oracle["success_rate"] * oracle["episodes"])
        if failed:
            short.append(f"`{env_id.split('/')[-1]}` ({failed} of {oracle['episodes']})")
    text = "\n".join(rows)
    if short:
        text += "\n\nThe oracle fails tasks only on " + " and ".join(short) + "."
    return text


# docs/envgen.md -------------------------------------------------------------------------------

ENVGEN_ENV = "llmgym/CrafterPixels-v0"
ENVGEN_ARMS = {
    "ppo-envgen-offline": "PPO + EnvGen (offline designer)",
    "ppo": "PPO (`--designer none`)",
}
ENVGEN_SEEDS = (0, 1)
PAPER_STEPS = 4 * (120_000 + 120_000) + 1_000_000


def envgen_runs(schedule: str = "cpu") -> dict[tuple[str, int], dict[str, Any]]:
    """``{(arm, seed): result}`` of the committed runs of ``schedule`` on Crafter's pixels."""
    runs = {}
    for path in sorted((RESULTS / "envgen").glob("*.json")):
        run = json.loads(path.read_text())
        if run["env"] == ENVGEN_ENV and run["schedule_name"] == schedule:
            runs[(run["arm"], run["seed"])] = run
    return runs


def envgen_table(schedule: str = "cpu") -> str:
    """Crafter score per arm and seed (``not run`` where no result JSON exists), the
    per-achievement success of each arm, and what the runs cost."""
    runs = envgen_runs(schedule)
    header = " | ".join(f"seed {seed}" for seed in ENVGEN_SEEDS)
    rows = [f"| arm | {header} | mean |", "|---|" + "---|" * (len(ENVGEN_SEEDS) + 1)]
    for arm, label in ENVGEN_ARMS.items():
        cells, scores = [], []
        for seed in ENVGEN_SEEDS:
            run = runs.get((arm, seed))
            if run is None:
                cells.append("not run")
                continue
            scores.append(run["score"])
            cells.append(f"{run['score']:.2f} ({run['final_episodes']} episodes)")
        mean = f"{statistics.fmean(scores):.2f}" if scores else "—"
        rows.append(f"| {label} | {' | '.join(cells)} | {mean} |")
    parts = ["\n".join(rows)]
    if not runs:
        return parts[0]
    parts.append(_envgen_gaps(runs))
    parts.append(_envgen_achievements(runs))
    seconds = [run["seconds"] for run in runs.values()]
    rates = [run["total_steps"] / run["seconds"] for run in runs.values()]
    steps = next(iter(runs.values()))["total_steps"]
    loads = [run["machine"]["load_average_1m"] for run in runs.values()]
    dates = sorted({run["date"] for run in runs.values()})
    parts.append(
        f"{len(runs)} of {len(ENVGEN_ARMS) * len(ENVGEN_SEEDS)} runs committed "
        f"(`benchmarks/results/envgen/`, {', '.join(dates)}); {steps:,} steps each, "
        f"{span(s / 60 for s in seconds)} minutes a run ({span(rates)} steps/s, load average "
        f"{span(loads, '{:.1f}')} at the end). At that rate the paper's schedule "
        f"(`--schedule paper`, {PAPER_STEPS:,} steps) would take about "
        f"{span((PAPER_STEPS / r / 3600 for r in rates), '{:.1f}')} hours a run here."
    )
    return "\n\n".join(parts)


def _envgen_gaps(runs: dict[tuple[str, int], dict[str, Any]]) -> str:
    """The gap between the arms' mean scores against the spread between seeds of one arm."""
    scores = {
        arm: [run["score"] for (a, _), run in runs.items() if a == arm] for arm in ENVGEN_ARMS
    }
    means = {arm: statistics.fmean(values) for arm, values in scores.items() if values}
    spreads = {arm: max(v) - min(v) for arm, v in scores.items() if len(v) > 1}
    text = []
    if len(means) == len(ENVGEN_ARMS):
        first, second = ENVGEN_ARMS
        text.append(
            f"Gap between the arms' means: {means[first] - means[second]:+.2f} "
            f"({ENVGEN_ARMS[first]} minus {ENVGEN_ARMS[second]})."
        )
    if spreads:
        text.append(
            "Gap between the seeds of one arm: "
            + "; ".join(f"{spread:.2f} ({ENVGEN_ARMS[arm]})" for arm, spread in spreads.items())
            + "."
        )
    return " ".join(text) or "One run per arm at most: no gap to compare yet."


def _envgen_achievements(runs: dict[tuple[str, int], dict[str, Any]]) -> str:
    """Success per achievement (mean over an arm's seeds), for those any run unlocked."""
    skills = next(iter(runs.values()))["success"]
    arms = [arm for arm in ENVGEN_ARMS if any(a == arm for a, _ in runs)]
    means = {
        arm: {
            skill: statistics.fmean(
                run["success"][skill] for (a, _), run in runs.items() if a == arm
            )
            for skill in skills
        }
        for arm in arms
    }
    unlocked = [s for s in skills if any(means[arm][s] > 0 for arm in arms)]
    unlocked.sort(key=lambda s: -max(means[arm][s] for arm in arms))
    rows = [
        "| achievement (final phase) | " + " | ".join(ENVGEN_ARMS[a] for a in arms) + " |",
        "|---|" + "---|" * len(arms),
    ]
    for skill in unlocked:
        rows.append(
            f"| {skill.replace('_', ' ')} | "
            + " | ".join(_percent(means[arm][skill]) for arm in arms)
            + " |"
        )
    never = len(skills) - len(unlocked)
    return "\n".join(rows) + f"\n\nThe other {never} achievements: 0% in every run."


def envgen_paper(game: str) -> str:
    """EnvGen at the paper's schedule on ``game`` (``crafter`` or ``heist``): the table of
    ``benchmarks/envgen_paper_table.py`` from the committed runs."""
    from benchmarks import envgen_paper_table

    return envgen_paper_table.markdown(game)


def envgen_agent() -> str:
    """The symbolic Crafter agent's variants (``benchmarks/envgen_agent_table.py``)."""
    from benchmarks import envgen_agent_table

    return envgen_agent_table.markdown()


def ppo_profile() -> str:
    """Where a PPO step's time goes (``benchmarks/ppo_profile.py``), torch PPO vs SB3."""
    data = load("ppo_profile.json")
    if not data:
        return "Not measured yet: `python benchmarks/ppo_profile.py`."
    rows = [
        "| loop | steps per CPU second | env | acting (forward, sampling, buffers) | update "
        "| CPU time for 1.96M steps |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in (("torch_ppo", "PyTorch PPO (`ppo_torch.py`)"), ("sb3_ppo", "SB3 PPO")):
        run = data[key]
        share = run["split_share"]
        rows.append(
            f"| {label} | {run['steps_per_s']:,.0f} | {share['env']:.0%} | {share['act']:.0%} | "
            f"{share['update']:.0%} | {run['seconds_per_1_96M_steps'] / 60:.0f} min |"
        )
    env = data["env"]
    trained = env.get("trained_policy")
    trained_text = (
        f" Under a trained policy (the saved policy of a paper-schedule run; episodes of "
        f"{trained['mean_episode_length']:,.0f} steps on average) the same games run "
        f"{trained['steps_per_s']:,.0f} steps per CPU second."
        if trained
        else ""
    )
    return (
        "\n".join(rows)
        + f"\n\nThe environment alone: {env['batched_steps_per_s']:,.0f} random-action steps "
        f"per CPU second with `CrafterSymbolicVectorEnv` ({data['num_envs']} games in one "
        f"process), {env['batched_over_sync']:.2f}x gymnasium's `SyncVectorEnv` of the same "
        f"games. The whole loop: PyTorch PPO {data['torch_over_sb3']:.2f}x SB3's steps per CPU "
        f"second ({data['policy']}; CPU seconds of the process, since the shared machine's "
        f"load average was {data['load_average_1m_before']:.1f}) — `python "
        "benchmarks/ppo_profile.py`." + trained_text + _paper_run_split()
    )


def _paper_run_split() -> str:
    """The time split of the committed paper-schedule Crafter runs (their own accounting)."""
    runs = [
        json.loads(path.read_text())
        for path in sorted((RESULTS / "envgen" / "paper").glob("craftersymbolic-*.json"))
    ]
    runs = [run for run in runs if run.get("timing")]
    if not runs:
        return ""
    total = {key: sum(run["timing"][key] for run in runs) for key in ("env", "act", "update")}
    cpu = sum(total.values())
    steps = [run.get("steps_run", run["total_steps"]) for run in runs]
    env_rate = sum(steps) / total["env"]
    loop_rate = sum(steps) / cpu
    minutes = [run["seconds"] / 60 for run in runs]
    return (
        f" In the {len(runs)} committed paper-schedule Crafter runs (below) the split was "
        f"env {total['env'] / cpu:.0%}, acting {total['act'] / cpu:.0%}, update "
        f"{total['update'] / cpu:.0%}: the game {env_rate:,.0f} steps per CPU second, the "
        f"whole loop {loop_rate:,.0f}, and {span(minutes)} minutes of wall clock a run."
    )


# docs/agentevol.md ----------------------------------------------------------------------------


def agentevol_run() -> str:
    """The committed AgentEvol run: its stages, its timings and the oracle/random reference."""
    run = load("agentevol.json")
    if not run:
        return f"AgentEvol: {NOT_MEASURED} (run `python benchmarks/agentevol.py`)."
    (env_id,) = run["envs"]
    eval_tasks = run["args"]["eval_tasks"]
    rows = [
        f"| stage | training examples | eval success ({eval_tasks} tasks, 95% interval) |",
        "|---|---|---|",
    ]
    for stage in run["stages"]:
        rate = stage["eval_success"][env_id]
        success = f"{rate:.0%} ({_interval(rate, eval_tasks)})"
        if stage["name"] == "bc":
            rows.append(f"| BC | {stage['train_examples']} oracle trajectories | {success} |")
            continue
        explored = stage["explored_success"][env_id]
        examples = (
            f"{run['expert_trajectories']} expert + {stage['collected_kept']} of "
            f"{stage['explored']} explored ({explored:.0%} of them succeeded)"
        )
        label = stage["name"].replace("iter", "iteration ")
        rows.append(f"| {label} | {examples} | {success} |")
    first, last = (run["stages"][i]["eval_success"][env_id] for i in (0, -1))
    (low_first, high_first), (low_last, high_last) = (
        wilson_interval(round(rate * eval_tasks), eval_tasks) for rate in (first, last)
    )
    overlap = low_last <= high_first and low_first <= high_last
    verdict = (
        "**Evolution made no difference we can measure at this scale**: the 95% intervals of BC "
        "and of the last iteration overlap."
        if overlap
        else f"The last iteration's success differs from BC's beyond the 95% intervals "
        f"({first:.0%} to {last:.0%})."
    )
    timings = run["timings_s"]
    evals = [v for k, v in timings.items() if k.endswith("_eval")]
    learn = sum(v for k, v in timings.items() if k.startswith("iter") and k.endswith("_learn"))
    explore = sum(v for k, v in timings.items() if k.endswith("_explore"))
    cost = (
        f"{timings['total'] / 60:.0f} minutes in all (`benchmarks/results/agentevol.json`): "
        f"BC training {timings['bc_train'] / 60:.0f} min, exploring {explore / 60:.0f} min, "
        f"retraining from the base {learn / 60:.0f} min, each evaluation {span(evals)} s."
    )
    text = "\n".join(rows) + f"\n\n{verdict}\n\n{cost}"
    reference = load("agentevol_reference.json")
    if reference and reference["config"] == run["args"]["config"]:
        agents = reference["agents"][env_id]
        oracle, random = agents["oracle"], agents["random"]
        text += (
            f" For scale, on the same {reference['eval_tasks']} eval tasks "
            "(`benchmarks/agentevol_reference.py`): the oracle solves "
            f"{oracle['success_rate']:.0%} in {oracle['mean_steps']:.1f} moves on average, and "
            f"a random walker {random['success_rate']:.0%} in {random['mean_steps']:.1f} "
            f"(at most {random['max_steps']})."
        )
    return text


# docs/multiagent.md ---------------------------------------------------------------------------

MULTIAGENT = ("llmgym/ConnectFour-v0", "llmgym/Negotiation-v0", "llmgym/Auction-v0")


def multiagent_oracles() -> str:
    """Oracle and random success against the default opponent (``oracle_rates.json``)."""
    rates = (load("oracle_rates.json") or {}).get("environments", {})
    rows = ["| Id | oracle | random valid moves | tasks |", "|---|---|---|---|"]
    for env_id in MULTIAGENT:
        row = rates.get(env_id)
        if row is None:
            rows.append(f"| `{env_id}` | {NOT_MEASURED} | | |")
            continue
        rows.append(
            f"| `{env_id}` | {row['oracle']['success_rate']:.1%} | "
            f"{row['random']['success_rate']:.1%} | the first {row['tasks']} of the eval split |"
        )
    return "\n".join(rows)


def multiagent_speed() -> str:
    """The games' throughput (``throughput.json``) and Connect Four against PettingZoo's own."""
    parts = []
    throughput = load("throughput.json")
    if throughput:
        games = [row for row in throughput["results"] if row["env_id"] in MULTIAGENT]
        parts.append(
            f"{span((row['oracle_steps_per_s'] for row in games), '{:,.0f}')} steps/s (oracle "
            f"actions) and {span((row['resets_per_s'] for row in games), '{:,.0f}')} resets/s on "
            "one core (`benchmarks/throughput.py`)."
        )
    peer = load("multiagent_peer.json")
    if peer:
        by_side = {row["environment"].split()[0]: row["steps_per_s"] for row in peer["results"]}
        parts.append(
            "`python benchmarks/multiagent_peer.py` plays random legal Connect Four in llmgym "
            "(text) and in PettingZoo's own `connect_four_v3` (NumPy arrays and action masks) in "
            f"the same run: {by_side['llmgym']:,.0f} vs {by_side['pettingzoo']:,.0f} steps/s, a "
            f"ratio of {peer['llmgym_over_pettingzoo_steps_ratio']:.2f}."
        )
    return "\n".join(parts) or NOT_MEASURED


# docs/serving.md ------------------------------------------------------------------------------


def serving_table(name: str) -> str:
    """One ``benchmarks/serving.py`` result as a table, with the machine's load around it."""
    data = load(name)
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/serving.py`)"
    rows = [
        "| transport | sessions | steps/s | p50 ms | p99 ms | server CPU µs/step | "
        "client CPU µs/step |",
        "|---|---|---|---|---|---|---|",
        f"| in-process | 1 | {data['in_process']['steps_per_s']:,.0f} | "
        f"{data['in_process']['step_ms']:.3f} | | | |",
    ]
    for row in data["remote"]:
        rows.append(
            f"| {row['transport']} | {row['sessions']} | {row['steps_per_s']:,.0f} | "
            f"{row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {row['server_cpu_us_per_step']:,.0f} | "
            f"{row['client_cpu_us_per_step']:,.0f} |"
        )
    before, after = data["load_average_before"][0], data["load_average_after"][0]
    return "\n".join(rows) + (
        f"\n\n`{data['env_id']}`, {data['client_processes']} client "
        f"processes, {data['seconds_per_level']:g} s per level, load average {before:.1f} "
        f"before the run and {after:.1f} after (`benchmarks/results/{name}`)."
    )


def serving_summary() -> str:
    """What the WebSocket and HTTP transports cost against the targets, text and pixels."""
    data = load("serving.json")
    if not data:
        return NOT_MEASURED
    measured, targets = data["measured"], data["targets"]
    remote = {(row["transport"], row["sessions"]): row for row in data["remote"]}

    def ratios(key: str) -> str:
        values = [
            remote[("http", sessions)][key] / row[key]
            for (transport, sessions), row in remote.items()
            if transport == "websocket" and ("http", sessions) in remote
        ]
        return span(values, "{:.1f}")

    def meets(transport: str) -> bool:
        return (
            measured[f"added_ms_at_1 ({transport})"] <= targets["added_ms_at_1"]
            and measured[f"steps_per_s_at_64 ({transport})"] >= targets["steps_per_s_at_64"]
        )

    text = (
        f"Over the WebSocket stream, which `RemoteEnv` uses by default: "
        f"{measured['added_ms_at_1 (websocket)']:.2f} ms added per step at one session (target: "
        f"at most {targets['added_ms_at_1']:g} ms) and "
        f"{measured['steps_per_s_at_64 (websocket)']:,.0f} steps/s at 64 sessions (target: at "
        f"least {targets['steps_per_s_at_64']:,.0f}): "
        f"{'both targets met' if meets('websocket') else 'not both targets met'}. A request per "
        f'step (`transport="http"`) costs the server {ratios("server_cpu_us_per_step")} times '
        f"and the client {ratios('client_cpu_us_per_step')} times the CPU per step "
        f"({measured['added_ms_at_1 (http)']:.2f} ms added at one session, "
        f"{measured['steps_per_s_at_64 (http)']:,.0f} steps/s at 64): "
        f"{'it meets both targets' if meets('http') else 'it does not meet the targets'}."
    )
    return text


def serving_pixels_summary() -> str:
    """What a pixel environment's frames add per step over the stream, against text."""
    text, pixels = load("serving.json"), load("serving_pixels.json")
    if not text or not pixels:
        return NOT_MEASURED

    def added(data: dict[str, Any]) -> float:
        return next(
            row["added_ms_p50"]
            for row in data["remote"]
            if row["transport"] == "websocket" and row["sessions"] == 1
        )

    return (
        f"{added(pixels):.2f} ms is added per step at one session over the stream, against "
        f"{added(text):.2f} ms for `{text['env_id']}`'s short text."
    )


def server_isolation() -> str:
    """``benchmarks/server_isolation.py``: /health and another session's steps while one
    session runs a long step, in a worker thread and in a child process."""
    data = load("server_isolation.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/server_isolation.py`)"
    rows = [
        "| slow session runs in | probe | answers | idle p50 ms | p50 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|",
    ]
    names = {"health": "`GET /health`", "wordle_step": f"{short_name(data['probe_env'])} step"}
    places = {"thread": "a worker thread", "process": "a child process"}
    for scenario in data["scenarios"]:
        for probe, during in scenario["during"].items():
            rows.append(
                f"| {places[scenario['isolation']]} | {names[probe]} | {during['count']} | "
                f"{scenario['idle'][probe]['p50_ms']:.2f} | {during['p50_ms']:.2f} | "
                f"{during['p99_ms']:.1f} | {during['max_ms']:.1f} |"
            )
    steps = span((s["slow_step_s"] for s in data["scenarios"]), "{:.1f}")
    during = [p for s in data["scenarios"] for p in s["during"].values()]
    p99, slowest = max(p["p99_ms"] for p in during), max(p["max_ms"] for p in during)
    target = data["target_ms"]
    verdicts = [
        f"{name} {'met' if value < target else 'not met'}"
        for name, value in (("p99", p99), ("max", slowest))
    ]
    before, after = data["load_average_before"][0], data["load_average_after"][0]
    return "\n".join(rows) + (
        f"\n\nWhile one `{data['slow_env']}` session's step ran for {steps} s (a query that only "
        f"the time limit stops), probed every {data['probe_interval_ms']:g} ms: p99 at most "
        f"{p99:.0f} ms, the slowest single answer {slowest:.0f} ms (target: under {target:g} ms; "
        f'{", ".join(verdicts)}); "idle p50" is the same probe with no slow step. The '
        f"{short_name(data['probe_env'])} steps go over the WebSocket stream of a `RemoteEnv`. "
        f"{data['machine']['cpus']} cores shared by the server, the probe and the rest of the "
        f"machine: load average {before:.1f} before the run and {after:.1f} after "
        "(`benchmarks/results/server_isolation.json`)."
    )


def serving_scale() -> str:
    """``benchmarks/serving_scale.py``: steps/s with 1 and 2 workers, per-session sizing, and
    the latency of the Ray hop."""
    data = load("serving_scale.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/serving_scale.py`)"
    failed = [r for r in data["runs"] if "error" in r]
    rows = [
        "| environment | sessions | 1 worker: steps/s | p50 ms | 2 workers: steps/s | p50 ms "
        "| 2 / 1 | bound 2s/(s+c) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, ratio in data["ratio_2_to_1_worker"].items():
        env_id, requested = key.rsplit("@", 1)
        pair = {
            workers: [
                r
                for r in data["runs"]
                if r["env_id"] == env_id
                and r["workers"] == workers
                and r.get("capped_from", r["sessions"]) == int(requested)
                and "error" not in r
            ]
            for workers in (1, 2)
        }
        one, two = pair[1], pair[2]
        sessions = one[0]["sessions"]
        capped = f" (of {requested}: what fits)" if sessions != int(requested) else ""
        server = statistics.median(r["server_cpu_ms_per_step"] for r in one + two)
        client = statistics.median(r["client_cpu_ms_per_step"] for r in one + two)
        medians = data["median_steps_per_s"][key]
        # the bound holds for single-threaded workers; SciWorld's sessions are processes
        bound = f"{2 * server / (server + client):.2f}x" if env_id in data["target_envs"] else "—"
        rows.append(
            f"| {short_name(env_id)} | {sessions}{capped} | {sig(medians['1'])} | "
            f"{statistics.median(r['p50_ms'] for r in one):.1f} | {sig(medians['2'])} | "
            f"{statistics.median(r['p50_ms'] for r in two):.1f} | {ratio:.2f}x | "
            f"{bound} |"
        )
    cpu: dict[str, list[float]] = {}
    for run in data["runs"]:
        if run.get("server_cpu_ms_per_step") is not None:
            cpu.setdefault(run["env_id"], []).append(run["server_cpu_ms_per_step"])
    sizing = [
        "| environment | memory per session (declared) | server CPU per step |",
        "|---|---|---|",
    ]
    for row in data["session_memory"]:
        declared = f" ({row['declared_mb']:g} MiB)" if row["declared_mb"] else ""
        spent = cpu.get(row["env_id"])
        sizing.append(
            f"| {short_name(row['env_id'])} | {row['mb_per_session']:.1f} MiB{declared} | "
            f"{span(spent, '{:.2f}') + ' ms' if spent else 'not measured'} |"
        )
    targets = [
        f"{short_name(key.split('@')[0])} at {key.split('@')[1]} sessions: {ratio:.2f}x "
        f"({'met' if ratio >= data['target_ratio'] else 'not met'})"
        for key, ratio in data["ratio_2_to_1_worker"].items()
        if key.split("@")[0] in data["target_envs"]
    ]
    hop = data.get("ray_hop")
    hop_text = (
        f" The Ray hop: one {short_name(hop['env_id'])} session stepped one step at a time "
        f"answers in {hop['in_process_p50_ms']:.2f} ms (p50) when the server hosts it and "
        f"{hop['ray_p50_ms']:.2f} ms when a Ray actor does (`--ray local`): "
        f"+{hop['added_ms']:.2f} ms a step; each session's actor process takes "
        f"{hop['actor_mb_per_session']:.0f} MiB (Wordle's own state included)."
        if hop
        else ""
    )
    before, after = data["load_average_before"][0], data["load_average_after"][0]
    return (
        "\n".join(rows)
        + "\n\n"
        + "\n".join(sizing)
        + (
            f"\n\n2 workers against 1 (target: at least {data['target_ratio']:g}x for "
            f"{', '.join(short_name(e) for e in data['target_envs'])}): {'; '.join(targets)}."
            f"{hop_text} Each run measured {data['seconds']:g} s after a warm-up, "
            f"{data['repeats']} runs of each worker count in alternating pairs (one pair for "
            "SciWorld), medians shown. The server's CPU per step (s) counts every process of the "
            "server (workers, and the child processes of SciWorld's sessions); the clients' (c) "
            "is the lean load generator's own; with both on the same cores, 2 workers can give "
            "at most 2s/(s+c) times 1 worker's steps/s (the bound column, from the medians). "
            "Memory is the proportional set size a session adds. "
            f"{data['machine']['cpus']} cores shared by the server and its clients, run at "
            f"niceness {data['niceness']} with load average {before:.1f} before and "
            f"{after:.1f} after (`benchmarks/results/serving_scale.json`)."
        )
        + "".join(
            f"\n\nNot got: {short_name(r['env_id'])} with {r['workers']} worker(s) at "
            f"{r['sessions']} sessions ({r['error']})."
            for r in failed
        )
    )


def server_limits() -> str:
    """``benchmarks/server_limits.py``: an authorised client's steps while connections are
    held, and the server's memory after what clients can make it build."""
    data = load("server_limits.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/server_limits.py`)"
    rows = [
        "| connections held | steps failed | p50 ms | p99 ms | max ms | open at the server "
        "while stepping | open after the header deadline |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["connections"]:
        latency = row["step_latency"]
        rows.append(
            f"| {row['held']:,} | {row['failed_steps']} of {row['steps']} | "
            f"{latency['p50_ms']:.1f} | {latency['p99_ms']:.1f} | {latency['max_ms']:.1f} | "
            f"{row['held_by_server_while_stepping']:,} | "
            f"{row['held_by_server_after_header_deadline']:,} |"
        )
    memory = data["memory"]
    household, webarena, burst = memory["household"], memory["webarena"], memory["burst"]
    allowed = webarena["allowed"]
    target = data["target_growth_mb"]
    first_seeds, first_rss = allowed["trace"][0]["seeds"], allowed["trace"][0]["rss_mb"]
    late_growth = allowed["rss_after_mb"] - first_rss

    def verdict(growth: float) -> str:
        return "met" if growth < target else "not met"

    costs = ", ".join(
        f"{short_name(c['env_id'])} {c['mb_per_session']:.0f} MB (declared {c['declared_mb']:g})"
        for c in data["session_costs"]
    )
    before, after = data["load_average_before"][0], data["load_average_after"][0]
    return "\n".join(rows) + (
        f"\n\nThe server's open-file limit was {data['server_open_files']:,} (soft and hard), so "
        f"it served at most {data['server_max_connections']:,} connections; the held ones came "
        "from the authorised client's own address, half idle and half having sent half a "
        "request line (those open at the server: the per-address cap, 256, less the client's "
        "own connections; each newcomer closed the oldest); the client stepped a Maze session "
        "over its WebSocket stream and over HTTP. Memory (resident, of the server process): "
        f"{household['weight_sets']} distinct "
        f"Household weight sets grew it by {household['growth_mb']:.0f} MB "
        f"({household['rss_before_mb']:.1f} to {household['rss_after_mb']:.1f} MB; target: "
        f"under {target} MB, {verdict(household['growth_mb'])}); {webarena['seeds']} WebArena "
        f"data seeds were refused by default ({webarena['refused_by_default']} of "
        f"{webarena['seeds']}), and where the operator allowed them grew it by "
        f"{allowed['growth_mb']:.0f} MB ({allowed['rss_before_mb']:.0f} to "
        f"{allowed['rss_after_mb']:.0f} MB, {allowed['seconds_per_seed']:.0f} s a seed; "
        f"{late_growth:+.0f} MB from the {first_seeds}th seed to the last: the caches keep a few "
        "seeds' data); after "
        f"{burst['sessions']} SQL sessions at once each ran {burst['queries_per_session']} "
        f"queries that sort in memory until the time limit and closed, the server went from "
        f"{burst['rss_idle_mb']:.0f} MB idle to {burst['rss_peak_mb']:.0f} MB at the peak and "
        f"back to {burst['rss_after_mb']:.0f} MB 3 s later. One session costs {costs} "
        f"(proportional set size of the server's processes). {data['machine']['cpus']} cores, "
        f"load average {before:.1f} before the run and {after:.1f} after "
        "(`benchmarks/results/server_limits.json`)."
    )


# docs/integrations.md -------------------------------------------------------------------------


def mcp_step() -> str:
    """``benchmarks/mcp_step.py``: a step over MCP, next to llmgym's WebSocket and a local step."""
    data = load("mcp_step.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/mcp_step.py`)"
    rows = [
        "| path | steps | p50 ms | p99 ms | added to a local step (p50) |",
        "|---|---|---|---|---|",
    ]
    paths = (
        ("mcp", "MCP, the `mcp` SDK's client"),
        ("mcp_plain_http", "MCP, a plain HTTP client (httpx)"),
        ("llmgym_ws", "llmgym's WebSocket (`RemoteEnv`)"),
    )
    for key, name in paths:
        row = data[key]
        rows.append(
            f"| {name} | {row['steps']:,} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | "
            f"{row['added_p50_ms']:.2f} ms |"
        )
    local = data["local"]
    rows.append(
        f"| local `step` | {local['steps']:,} | {local['p50_ms']:.3f} | {local['p99_ms']:.3f} | |"
    )
    machine = data["machine"]
    return "\n".join(rows) + (
        f"\n\nMCP with the SDK's client adds {data['mcp_added_over_llmgym_p50_ms']:.1f} ms per "
        f"step over llmgym's WebSocket (p50, {data['mcp_over_llmgym_p50']:.1f} times its "
        f"latency). `{data['env_id']}`, {data['seconds_per_path']:g} s per path, one server; "
        f"{machine['cpus']} cores, load average {machine['load_average_1m']:.1f} "
        "(`benchmarks/results/mcp_step.json`)."
    )


# docs/environments/*.md -----------------------------------------------------------------------


def throughput_line(env_id: str) -> str:
    """An environment's steps/s and resets/s (``throughput.json``)."""
    data = load("throughput.json")
    for row in (data or {}).get("results", ()):
        if row["env_id"] == env_id:
            return (
                f"{row['oracle_steps_per_s']:,.0f} steps/s (oracle), "
                f"{row['random_steps_per_s']:,.0f} steps/s (random valid actions), "
                f"{row['resets_per_s']:,.0f} resets/s — one CPU core, "
                "`python benchmarks/throughput.py`"
            )
    return f"{NOT_MEASURED} (run `python benchmarks/throughput.py`)"


def oracle_lines(env_id: str) -> list[str]:
    """The oracle's and random play's success: on the AgentEval suite's tasks
    (``agenteval_baselines.json``) and on the first eval tasks (``oracle_rates.json``)."""
    lines = []
    suite = (load("agenteval_baselines.json") or {}).get("baselines", {}).get(env_id)
    if suite:
        oracle, random = suite["oracle"], suite["random"]
        lines.append(
            f"AgentEval suite ({oracle['episodes']} eval tasks, ReAct replies): the oracle "
            f"solves {oracle['success_rate']:.1%} (mean reward {oracle['mean_reward']:.3f}), "
            f"random valid actions {random['success_rate']:.1%} "
            f"(mean reward {random['mean_reward']:.3f}) — "
            "`python benchmarks/agenteval_baselines.py`"
        )
    row = (load("oracle_rates.json") or {}).get("environments", {}).get(env_id)
    if row:
        oracle, random = row["oracle"], row["random"]
        failed = oracle.get("failed_tasks") or []
        misses = f"; failed: {', '.join(f'`{t}`' for t in failed)}" if 0 < len(failed) <= 5 else ""
        lines.append(
            f"The first {row['tasks']} eval tasks, default config: the oracle solves "
            f"{oracle['successes']} ({oracle['success_rate']:.1%}) in "
            f"{oracle['mean_steps']:.1f} steps on average ({oracle['min_steps']:,}-"
            f"{oracle['max_steps']:,}){misses}; random valid actions solve {random['successes']} "
            f"({random['success_rate']:.1%}) — `python benchmarks/oracle_rates.py`, "
            f"{row['date']}, commit {(row['commit'] or 'unknown')[:7]}"
        )
    return lines or [f"Oracle success: {NOT_MEASURED} (run `python benchmarks/oracle_rates.py`)"]


def _crafter_oracle() -> list[str]:
    data = load("crafter_oracle.json")
    if not data:
        return []
    worlds = data["worlds"]
    counts = {k: round(v * worlds / 100) for k, v in data["success_rates_percent"].items()}
    every = [k for k, n in counts.items() if n == worlds]
    some = sorted((k for k, n in counts.items() if 0 < n < worlds), key=lambda k: -counts[k])
    never = [k for k, n in counts.items() if n == 0]
    lives = [episode["steps"] for episode in data["episodes"] if episode["died"]]

    def names(keys: list[str]) -> str:
        return ", ".join(k.replace("_", " ") for k in keys) or "none"

    return [
        f'Default worlds (`target="none"`, Crafter seeds 0-{worlds - 1}, at most '
        f"{data['max_steps']:,} steps): the oracle unlocks {names(every)} in {worlds} of "
        f"{worlds} worlds; "
        + ", ".join(f"{k.replace('_', ' ')} {counts[k]}/{worlds}" for k in some)
        + f"; {names(never)} in none. Crafter score {data['score_percent']:.1f}%. It died in "
        f"{data['deaths']} of {worlds} worlds, between steps {min(lives):,} and {max(lives):,} "
        "— `python benchmarks/crafter_oracle.py`"
    ]


def _crafter_speed(*keys: str) -> list[str]:
    data = load("crafter_speed.json")
    if not data:
        return []
    what = {
        "reset_speedup": "reset",
        "text_step_speedup": "step",
        "pixel_step_speedup": "step",
        "frame_speedup": "drawing a frame",
    }
    shown = [f"{what[key]} {data['speedups'][key]:.1f}×" for key in keys if key in data["speedups"]]
    faster = ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else shown[0]
    return [
        f"Against Crafter {data['crafter_version']} itself: {faster} faster — "
        "`python benchmarks/crafter_speed.py`"
    ]


def _textworld() -> list[str]:
    data = load("textworld_overhead.json")
    if not data:
        return []
    ours, theirs = data["results"]["llmgym"], data["results"]["textworld"]
    return [
        f"Against TextWorld {data['textworld_version']}'s own gym interface on the same "
        f"{data['games']} games and commands: {data['step_overhead']:+.1%} per step "
        f"({ours['us_per_step'] / 1000:.1f} vs {theirs['us_per_step'] / 1000:.1f} ms), reset of "
        f"a cached game {ours['ms_per_reset']:.0f} vs {theirs['ms_per_reset']:.0f} ms — "
        "`python benchmarks/textworld_overhead.py`"
    ]


def _webshop() -> list[str]:
    data = load("webshop_search.json")
    if not data:
        return []
    every = next(row for row in data["results"] if row["query_set"] == "all")
    quality = data["ranking_quality"]
    return [
        f"Search over {data['catalogue']['products']:,} products: {every['p50_ms']:.1f} ms "
        f"median, {every['p99_ms']:.1f} ms p99 over {every['queries']:,} queries; the goal "
        f"product is in the top 10 for {quality['goal_hit_at_10']:.1%} of instructions — "
        "`python benchmarks/webshop_search.py`"
    ]


def _searchqa() -> list[str]:
    data = load("searchqa_corpus.json")
    if not data:
        return []
    questions = next(
        row for row in data["search"] if row["query_set"] == "questions" and row["engine"] == "fts5"
    )
    quality = data["retrieval_quality"]["fts5"]
    return [
        f"Corpus of {data['corpus']['articles']:,} articles ({data['corpus']['words']:,} words): "
        f"generated in {data['generate_s']:.2f} s, indexed in {data['index_build_s']:.2f} s; a "
        f"search for a pasted question takes {questions['p50_ms']:.2f} ms median "
        f"({questions['p99_ms']:.1f} ms p99), "
        f"{data['scan_over_fts5_cpu_p50']['questions']:.0f} times less CPU than scoring BM25 by "
        f"scanning every article; a search for a title returns its article first for "
        f"{quality['title_hit_at_1']:.1%} of the articles — `python benchmarks/searchqa_corpus.py`",
        *_searchqa_original_index(),
    ]


def _searchqa_original_index() -> list[str]:
    data = load("searchqa_original_index.json")
    if not data:
        return []
    largest = max(data["sizes"], key=lambda row: row["passages"])
    wiki = data["extrapolated_wiki_18"]
    return [
        f"Original data, indexing a Search-R1 corpus (synthetic, in wiki-18's layout: a title "
        f"and 100 words a passage): {largest['passages']:,} passages took "
        f"{largest['build_cpu_s']:.0f} s of CPU ({largest['build_s']:.0f} s wall-clock) into "
        f"{largest['index_bytes'] / 1e6:,.0f} MB besides the corpus file "
        f"({largest['corpus_bytes'] / 1e6:,.0f} MB); a search took "
        f"{largest['search_cpu_p50_ms']:.2f} ms of CPU (median; "
        f"{largest['search_cpu_p95_ms']:.2f} ms p95). Extrapolated to wiki-18's "
        f"{wiki['passages']:,} passages: {wiki['build_cpu_s'] / 60:.0f} minutes of CPU, "
        f"{wiki['index_bytes'] / 2**30:.1f} GiB, searches {wiki['search_cpu_p50_ms']:.0f} ms "
        "(in proportion to the passages) — `python benchmarks/searchqa_original_index.py`"
    ]


def _webarena() -> list[str]:
    data = load("webarena_browser.json")
    if not data:
        return []
    store = data["store_data"]
    return [
        f"Page loads with their accessibility tree, on the {data['pages']} pages the oracle visits "
        f"in {data['tasks']} eval tasks: {data['in_process_pages_per_s']:,.0f} pages/s "
        f"in-process ({data['in_process_uncached_pages_per_s']:,.0f} without the parsed-page "
        f"cache) against {data['chromium_pages_per_s']:,.1f} in headless Chromium through "
        f"Playwright, as WebArena runs: {data['in_process_over_chromium']:,.0f} times faster "
        "(load average "
        f"{data['machine'].get('load_average_1m', '?')}) — `python benchmarks/webarena_browser.py`",
        f"The store's data: {store['products']:,} products in {store['categories']} categories, "
        f"{store['customers']:,} customers, {store['orders']:,} orders ({store['order_items']:,} "
        f"lines), {store['reviews']:,} reviews; {store['database_bytes'] / 1e6:.1f} MB of sqlite",
        *_webarena_sites(),
    ]


def _webarena_sites() -> list[str]:
    data = load("webarena_sites.json")
    if not data:
        return []
    lines = []
    for name, site in data["sites"].items():
        rows = ", ".join(
            f"{count:,} {table.replace('_', ' ')}" for table, count in site["rows"].items()
        )
        lines.append(
            f"The {name} site: {rows}, built in {site['build_seconds']:.2f} s; "
            f"{site['templates']} templates ({', '.join(site['kinds'])}), "
            f"{site['train_instances']:,} train and {site['eval_instances']:,} eval instances; "
            f"the oracle solves {site['oracle_solved']} of {site['eval_instances']} eval tasks at "
            f"{site['oracle_steps_per_second']:,} steps/s (random actions: "
            f"{site['random_steps_per_second']:,} steps/s; load average "
            f"{data['machine'].get('load_average_1m', '?')}) "
            "— `python benchmarks/webarena_sites.py`"
        )
    return lines


def _sql() -> list[str]:
    data = load("sql_sandbox.json")
    if not data:
        return []
    return [
        f"The sandbox's guards cost {data['sandbox_over_plain'] - 1:.0%} per query over plain "
        f"sqlite3 ({data['queries']:,} questions' gold queries) — "
        "`python benchmarks/sql_sandbox.py`"
    ]


def _connect_four() -> list[str]:
    data = load("multiagent_peer.json")
    if not data:
        return []
    return [
        f"Random legal play through the AEC API runs at "
        f"{data['llmgym_over_pettingzoo_steps_ratio']:.2f} times the steps/s of PettingZoo's "
        "own `connect_four_v3` — `python benchmarks/multiagent_peer.py`"
    ]


EXTRAS = {
    "llmgym/Crafter-v0": lambda: (
        _crafter_oracle() + _crafter_speed("reset_speedup", "text_step_speedup")
    ),
    "llmgym/CrafterPixels-v0": lambda: _crafter_speed(
        "reset_speedup", "pixel_step_speedup", "frame_speedup"
    ),
    "llmgym/TextWorld-v0": _textworld,
    "llmgym/WebShop-v0": _webshop,
    "llmgym/WebArena-v0": _webarena,
    "llmgym/SQL-v0": _sql,
    "llmgym/SearchQA-v0": _searchqa,
    "llmgym/ConnectFour-v0": _connect_four,
}
"""Figures of one environment beyond throughput and oracle success, from its own benchmark."""


def measured_section(env_id: str) -> str:
    """The ``## Measured`` section of an environment's page."""
    lines = [f"- Throughput: {throughput_line(env_id)}."]
    lines += [f"- {line}." for line in oracle_lines(env_id)]
    lines += [f"- {line}." for line in EXTRAS.get(env_id, lambda: [])()]
    return "\n".join(
        [
            "## Measured",
            "",
            "On the project's 2-core machine; each figure names the script that writes it to "
            "`benchmarks/results/`.",
            "",
            *lines,
        ]
    )


def viewer_speed() -> str:
    """``benchmarks/viewer_speed.py``: ``llmgym view`` at 10,000 episodes per run, against a
    page that loads the whole file and filters in the browser."""
    data = load("viewer_speed.json")
    if not data:
        return NOT_MEASURED
    viewer, peer = data["browser"]["viewer"], data["browser"]["peer_whole_file"]
    api = data["api"]
    rows = [
        "| measured (median) | `llmgym view` | whole file in the page | ratio |",
        "|---|---|---|---|",
        f"| page load, list shown | {viewer['page_load_ms']:,.0f} ms | "
        f"{peer['page_load_ms']:,.0f} ms | {data['browser']['page_load_ratio']}x |",
        f"| filter by environment, table shown | {viewer['filter_ms']:,.0f} ms | "
        f"{peer['filter_ms']:,.0f} ms | {data['browser']['filter_ratio']}x |",
        f"| open an episode | {viewer['open_episode_ms']:,.0f} ms | - | - |",
    ]
    return (
        "\n".join(rows)
        + f"\n\nTwo runs of {data['episodes_per_run']:,} episodes each (run A's file: "
        f"{data['run_a_file_mb']} MB); indexing both when the server starts took "
        f"{data['index_load_s']} s. API answers: a filtered page "
        f"{api['filter_env_success_ms']} ms, a search in instructions "
        f"{api['search_instruction_ms']} ms, a comparison of the two runs {api['compare_ms']} ms, "
        f"one episode {api['episode_ms']} ms (load average {data['machine']['load_average_1m']} "
        f"on {data['machine']['cpus']} cores; `python benchmarks/viewer_speed.py`)."
    )


# ------------------------------------------------------------------ original datasets
def _machine_note(data: dict[str, Any], name: str) -> str:
    load_1m = data.get("machine", {}).get("load_average_1m")
    where = f", load average {load_1m:.1f}" if load_1m is not None else ""
    return f"(`benchmarks/results/{name}`, the project's 2-core machine{where})"


def originals_bird() -> str:
    """``benchmarks/bird_loading.py``: the cost of reading a BIRD-sized directory."""
    data = load("bird_loading.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/bird_loading.py`)"
    rows = ["| what | ms |", "|---|---|"]
    rows += [f"| {row['what']} | {sig(row['ms'])} |" for row in data["results"]]
    sizes = data["file_bytes"]
    return "\n".join(rows) + (
        f"\n\nOn question files of BIRD's size ({data['questions']['train']:,} + "
        f"{data['questions']['dev']:,} questions, {sizes['train.json'] / 1e6:.1f} MB + "
        f"{sizes['dev.json'] / 1e6:.1f} MB) over {data['databases']['train']} + "
        f"{data['databases']['dev']} small databases, written by the script "
        f"{_machine_note(data, 'bird_loading.json')}."
    )


def originals_webshop() -> str:
    """``benchmarks/webshop_original_load.py``: loading WebShop's files into the catalogue."""
    data = load("webshop_original_load.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/webshop_original_load.py`)"
    r = data["results"]
    rows = [
        "| what | measured |",
        "|---|---|",
        f"| products (WebShop's layout, written by the script) | {r['products']:,} |",
        f"| parse the files and make the human goals, CPU | {sig(r['parse_cpu_seconds'])} s |",
        f"| parse and build the FTS5 catalogue (once per directory), CPU | "
        f"{sig(r['load_and_index_cpu_seconds'])} s |",
        f"| a second load in the same process | {sig(r['cached_load_ms'])} ms |",
        f"| catalogue database per product | {r['database_bytes_per_product']:,.0f} bytes |",
        f"| peak memory of the loading process | {r['peak_rss_mib']:.0f} MiB |",
        f"| extrapolated: catalogue build per million products, CPU | "
        f"{r['extrapolated_load_and_index_cpu_seconds_per_million'] / 60:.0f} minutes |",
        f"| extrapolated: database per million products | "
        f"{r['extrapolated_database_gib_per_million']:.2f} GiB |",
    ]
    return "\n".join(rows) + f"\n\n{_machine_note(data, 'webshop_original_load.json')}"


def originals_search() -> str:
    """``benchmarks/searchqa_original_index.py``: BM25 over a Search-R1 corpus, per million
    passages, extrapolated to wiki-18's 21M."""
    data = load("searchqa_original_index.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/searchqa_original_index.py`)"
    per, wiki = data["per_million_passages"], data["extrapolated_wiki_18"]
    largest = max(data["sizes"], key=lambda size: size["passages"])
    rows = [
        f"| | {largest['passages']:,} passages (measured) | {wiki['passages']:,} passages "
        "(wiki-18, extrapolated) |",
        "|---|---|---|",
        f"| index build, CPU | {sig(largest['build_cpu_s'])} s | "
        f"{wiki['build_cpu_s'] / 60:.0f} minutes |",
        f"| index size (besides the corpus file) | {largest['index_bytes'] / 2**20:,.0f} MiB | "
        f"{wiki['index_gib']:.1f} GiB |",
        f"| search, CPU, median / p95 | {sig(largest['search_cpu_p50_ms'])} / "
        f"{sig(largest['search_cpu_p95_ms'])} ms | {sig(wiki['search_cpu_p50_ms'])} / "
        f"{sig(wiki['search_cpu_p95_ms'])} ms |",
    ]
    return "\n".join(rows) + (
        f"\n\nPer million passages: {sig(per['build_cpu_s'])} s of CPU to build, "
        f"{per['index_bytes'] / 2**20:,.0f} MiB of index "
        f"{_machine_note(data, 'searchqa_original_index.json')}."
    )


def originals_webarena() -> str:
    """``benchmarks/webarena_original.py``: WebArena's task kinds, what the oracle can answer,
    and a step's cost on a served site."""
    data = load("webarena_original.json")
    if not data:
        return f"{NOT_MEASURED} (run `python benchmarks/webarena_original.py`)"
    rows = ["| WebArena's configs (commit " + data["webarena_commit"][:7] + ") | tasks |"]
    rows.append("|---|---|")
    rows += [f"| eval types {kind} | {count} |" for kind, count in data["eval_types"].items()]
    rows += [f"| oracle: {kind} | {count} |" for kind, count in data["oracle"].items()]
    rows.append(f"| need Magento's REST API helpers | {data['tasks_with_rest_api_helpers']} |")
    return "\n".join(rows) + (
        f"\n\nA step (action, page load, accessibility tree) takes a median of "
        f"{sig(data['seconds_per_step_median'])} s on llmgym's served wiki "
        f"{_machine_note(data, 'webarena_original.json')}."
    )


def envgen_reproducibility() -> str:
    """Which emulated machine differences change a short EnvGen training run, with the CPU's
    own (fast) float kernels and with the portable ones (``envgen_reproducibility.py``)."""
    data = load("envgen_reproducibility.json")
    if not data:
        return "Not measured yet: `python benchmarks/envgen_reproducibility.py`."

    def cell(row: dict[str, Any]) -> str:
        if row["bitwise_equal"]:
            return "bitwise equal"
        first = row["first_cycle_differing"]
        return (
            f"score {row['score_difference']:+.2f}, parameters up to "
            f"{row['largest_parameter_difference']:.1e} apart"
            + (f", per-skill success differing from cycle {first} on" if first else "")
        )

    rows = [
        "| emulates | environment | fast kernels (the CPU's choice) | portable kernels |",
        "|---|---|---|---|",
    ]
    for name, fast in data["fast"].items():
        if name == "this machine":
            continue
        environment = " ".join(f"`{k}={v}`" for k, v in fast["environment"].items()) or "—"
        rows.append(
            f"| {fast['emulates']} | {environment} | {cell(fast)} | "
            f"{cell(data['portable'][name])} |"
        )
    software = data["software"]
    against = data["portable_against_fast_on_this_machine"]
    cpu = data["mean_cpu_seconds"]
    policy = {
        mode: statistics.fmean(row["timing"]["act"] + row["timing"]["update"] for row in rows)
        for mode, rows in ((mode, data[mode].values()) for mode in ("fast", "portable"))
    }
    summary = (
        "Each row against the same kernels' run under this machine's own settings "
        f"({software['torch_cpu_capability']}, torch {software['torch']}, numpy "
        f"{software['numpy']}); `{data['run']}`. "
        f"Portable against fast kernels on this machine: "
        f"{'bitwise equal' if against['bitwise_equal'] else cell(against)}. "
        f"CPU time of a run (environment, acting and updates; mean over the settings): "
        f"{cpu['fast']:.1f} s with the fast kernels, {cpu['portable']:.1f} s with the portable "
        f"ones ({data['portable_cpu_cost']:+.0%}); acting and updates alone (the policy's "
        f"share, larger in this short run's 4 games per policy call than at the paper's "
        f"layout): {policy['fast']:.1f} s against {policy['portable']:.1f} s "
        f"({policy['portable'] / policy['fast'] - 1:+.0%})."
    )
    return "\n".join(rows) + "\n\n" + summary


def crafter_batched_speed() -> str:
    """The batched array Crafter against the vector env and crafter itself, with the split of
    a step into stepping and world generation (``crafter_batched_speed.py``)."""
    data = load("crafter_batched_speed.json")
    if not data:
        return "Not measured yet: `python benchmarks/crafter_batched_speed.py`."
    speed, ratios = data["steps_per_cpu_second"], data["ratios"]
    rows = [
        "| engine | steps per CPU second | µs a step | of which world generation | steps "
        "an episode |",
        "|---|---|---|---|---|",
        f"| `crafter.Env` (one game, its own generator and frames) | {sig(speed['crafter'])} "
        f"| {sig(1e6 / speed['crafter'])} | — | — |",
    ]
    labels = {
        "vector_16": "`CrafterSymbolicVectorEnv`, 16 games",
        "batched_16": "`CrafterBatchedVectorEnv`, 16 games",
        "batched_64": "`CrafterBatchedVectorEnv`, 64 games",
    }
    for name, label in labels.items():
        part = data["per_step"][name]
        rows.append(
            f"| {label} | {sig(speed[name])} | {part['microseconds_per_step']:.0f} "
            f"| {part['generation_microseconds_per_step']:.0f} | {part['steps_per_episode']:.0f} |"
        )
    verdict = "meets" if data["meets_target"] else "does not meet"
    return "\n".join(rows) + (
        f"\n\nRandom actions, one core, {data['rounds']} alternating rounds of "
        f"{data['cpu_seconds_per_side']:g} CPU seconds a side (load average "
        f"{data['load_average_1m_before']}-{data['load_average_1m_after']}). The batched env is "
        f"**{ratios['batched_16_over_vector_16']}x** the vector env and "
        f"{sig(ratios['batched_16_over_crafter'])}x crafter; it {verdict} the 5x target. World "
        f"generation ({data['world_generation_ms']:.1f} ms a world) is shared by both vector "
        "envs, so it costs both sides the same; the batched env's stepping alone is "
        f"{ratios['stepping_only_batched_16_over_vector_16']}x the vector env's. The first use "
        f"on a machine compiles the rules: {data['first_use_cpu_seconds']:.0f} CPU seconds, "
        "once (cached)."
    )
