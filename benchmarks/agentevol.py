"""AgentEvol (AgentGym's method) as a thin reference pipeline on llmgym.

    pip install -e '.[train]'
    python benchmarks/agentevol.py               # CPU-sized: a tiny model trained from scratch
    python benchmarks/agentevol.py --model PATH  # a local Hugging Face checkpoint (GPU advised)
    python benchmarks/agentevol.py --dpo         # the paper's DPO comparison

1. **Behaviour cloning**: collect oracle trajectories (ReAct replies, chat messages) on the train
   split and fine-tune a causal LM on them (loss on the assistant turns only). By default the
   model is tiny and trained from scratch, with a byte-level BPE tokenizer trained on the data,
   so BC trains on a CPU in minutes with no download; ``--model PATH`` takes a local Hugging
   Face checkpoint instead.
2. **Evolution**, ``--iterations`` times. *Explore*: the current model samples ``--k``
   trajectories per instruction on a train instruction set larger than the BC set (the BC tasks
   plus unseen ones), scored by the environments. *Learn*: retrain **from the base model** on the
   expert data plus the collected trajectories weighted by reward — each collected trajectory is
   kept with probability equal to its reward in [0, 1], so with 0/1 rewards exactly the successful
   ones. With ``--dpo``, learning is TRL's DPO on (successful, failed) pairs of the same task,
   starting from the BC model.
3. **Evaluation** on the eval split after BC and after every iteration.

Writes ``results.json`` (success per environment per stage, data sizes, timings) and
``success.png`` in ``--out``; also copies the JSON to ``benchmarks/results/agentevol.json``
unless ``--no-copy``.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from llmgym.core.registry import optional_import

torch = optional_import("torch", extra="train")
transformers = optional_import("transformers", extra="train")
trl = optional_import("trl", extra="train")
datasets = optional_import("datasets", extra="train")
tokenizers = optional_import("tokenizers", extra="train")

import gymnasium as gym  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_utils import byte_level_tokenizer, number_in  # noqa: E402

import llmgym  # noqa: E402
from llmgym.agents import Agent, OracleAgent  # noqa: E402
from llmgym.core.tasks import TaskRng  # noqa: E402
from llmgym.runner.rollout import choose_tasks, rollout  # noqa: E402
from llmgym.runner.trajectories import Trajectory, append_trajectory, to_messages  # noqa: E402
from llmgym.wrappers import make_chat_env  # noqa: E402

DEFAULT_ENVS = ("llmgym/Maze-v0", "llmgym/Wordle-v0")
SPECIAL_TOKENS = ["<|pad|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n"
    "{% if m['role'] == 'assistant' %}{% generation %}{{ m['content'] }}<|end|>{% endgeneration %}"
    "{% else %}{{ m['content'] }}<|end|>{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


class LocalModelAgent(Agent):
    """A Hugging Face causal LM answering with the chat template (greedy, or sampling)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        temperature: float = 0.0,
        max_new_tokens: int = 48,
        seed: int = 0,
    ) -> None:
        super().__init__(react=True)
        self.model, self.tokenizer = model, tokenizer
        self.temperature, self.max_new_tokens, self.seed = temperature, max_new_tokens, seed
        self.name = "local-model"

    def reset(self, env: gym.Env | None, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        torch.manual_seed(self.seed * 100_003 + (seed or 0))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        messages = info.get("messages") or [{"role": "user", "content": observation}]
        inputs = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        limit = self.model.config.max_position_embeddings - self.max_new_tokens
        inputs = {key: value[:, -limit:] for key, value in inputs.items()}
        sampling = (
            {"do_sample": True, "temperature": self.temperature, "top_k": 0}
            if self.temperature > 0
            else {"do_sample": False}
        )
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                eos_token_id=self.tokenizer.eos_token_id,
                pad_token_id=self.tokenizer.pad_token_id,
                **sampling,
            )
        new = output[0, inputs["input_ids"].shape[1] :]
        self.usage.prompt_tokens += int(inputs["input_ids"].shape[1])
        self.usage.completion_tokens += int(new.shape[0])
        return self.tokenizer.decode(new, skip_special_tokens=True).strip()


def weighted_learning_set(
    expert: Sequence[Trajectory], collected: Sequence[Trajectory], seed: int
) -> list[dict[str, Any]]:
    """The learning step's data: every expert trajectory, plus each collected one kept with
    probability equal to its reward clipped to [0, 1] (a seeded draw): the reward-weighted
    objective E[r log p] in expectation; with 0/1 rewards, exactly the successful ones."""
    rng = TaskRng("agentevol-weighting", seed)
    examples = [
        {
            "messages": to_messages(t)["messages"],
            "source": "expert",
            "task": f"{t.env_id}:{t.task_id}",
        }
        for t in expert
    ]
    for trajectory in collected:
        weight = min(1.0, max(0.0, trajectory.total_reward))
        if weight >= 1.0 or rng.random() < weight:
            examples.append(
                {
                    "messages": to_messages(trajectory)["messages"],
                    "source": "collected",
                    "task": f"{trajectory.env_id}:{trajectory.task_id}",
                }
            )
    return examples


def preference_pairs(collected: Sequence[Trajectory]) -> list[dict[str, Any]]:
    """DPO pairs: for each task explored, a successful and a failed trajectory, sharing the
    prompt (system prompt and task) and differing in the rest of the conversation."""
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for trajectory in collected:
        by_task[f"{trajectory.env_id}:{trajectory.task_id}"].append(trajectory)
    pairs = []
    for group in by_task.values():
        good = [t for t in group if t.success]
        bad = [t for t in group if not t.success and t.turns]
        for chosen, rejected in zip(good, bad, strict=False):
            chosen_messages, rejected_messages = (
                to_messages(chosen)["messages"],
                to_messages(rejected)["messages"],
            )
            pairs.append(
                {
                    "prompt": chosen_messages[:2],
                    "chosen": chosen_messages[2:],
                    "rejected": rejected_messages[2:],
                }
            )
    return pairs


def build_base(args: argparse.Namespace, expert: Sequence[Trajectory], folder: Path) -> None:
    """Save the base model and tokenizer to ``folder``: a tiny model from scratch, or a copy of
    ``--model``."""
    if args.model:
        tokenizer = transformers.AutoTokenizer.from_pretrained(args.model)
        model = transformers.AutoModelForCausalLM.from_pretrained(args.model)
    else:
        texts = [m["content"] for t in expert for m in to_messages(t)["messages"]]
        tokenizer = byte_level_tokenizer(
            list(texts),
            args.vocab_size,
            special_tokens=SPECIAL_TOKENS,
            pad_token="<|pad|>",
            eos_token="<|end|>",
            chat_template=CHAT_TEMPLATE,
        )
        config = transformers.LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=args.hidden_size,
            intermediate_size=2 * args.hidden_size,
            num_hidden_layers=args.layers,
            num_attention_heads=ATTENTION_HEADS,
            num_key_value_heads=ATTENTION_HEADS,
            max_position_embeddings=args.max_length,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=tokenizer.eos_token_id,
            tie_word_embeddings=True,
        )
        torch.manual_seed(args.seed)
        model = transformers.LlamaForCausalLM(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def load(folder: Path) -> tuple[Any, Any]:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    return model, tokenizer


def sft(base: Path, examples: list[dict[str, Any]], out: Path, args: argparse.Namespace) -> Path:
    """Fine-tune the base model on ``examples`` (chat messages), loss on assistant turns."""
    model, tokenizer = load(base)
    template = tokenizer.chat_template or ""
    config = trl.SFTConfig(
        output_dir=str(out / "trainer"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        lr_scheduler_type="cosine",
        logging_steps=10,
        save_strategy="no",
        report_to=[],
        assistant_only_loss="generation" in template,
        max_length=args.max_length,
        use_cpu=not torch.cuda.is_available(),
        seed=args.seed,
        disable_tqdm=args.quiet,
    )
    dataset = datasets.Dataset.from_list([{"messages": e["messages"]} for e in examples])
    trainer = trl.SFTTrainer(
        model=model, args=config, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.train()
    trainer.save_model(str(out))
    tokenizer.save_pretrained(out)
    shutil.rmtree(out / "trainer", ignore_errors=True)
    return out


def dpo(start: Path, pairs: list[dict[str, Any]], out: Path, args: argparse.Namespace) -> Path:
    """TRL's DPO on preference pairs, starting from (and referenced to) ``start``."""
    model, tokenizer = load(start)
    config = trl.DPOConfig(
        output_dir=str(out / "trainer"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=max(1, args.batch_size // 2),
        learning_rate=args.learning_rate / 10,
        beta=0.1,
        logging_steps=10,
        save_strategy="no",
        report_to=[],
        max_length=args.max_length,
        use_cpu=not torch.cuda.is_available(),
        seed=args.seed,
        disable_tqdm=args.quiet,
    )
    trainer = trl.DPOTrainer(
        model=model,
        args=config,
        train_dataset=datasets.Dataset.from_list(pairs),
        processing_class=tokenizer,
    )
    trainer.train()
    trainer.save_model(str(out))
    tokenizer.save_pretrained(out)
    shutil.rmtree(out / "trainer", ignore_errors=True)
    return out


def env_factory(env_id: str, args: argparse.Namespace) -> Callable[[], gym.Env]:
    config = json.loads(args.config) if args.config else None
    return lambda: make_chat_env(
        env_id, max_format_errors=args.max_format_errors, **({"config": config} if config else {})
    )


def play(
    agent: Agent,
    env_ids: Sequence[str],
    task_ids: dict[str, list[str]],
    args: argparse.Namespace,
    seed: int,
) -> list[Trajectory]:
    trajectories = []
    for env_id in env_ids:
        trajectories += rollout(
            env_factory(env_id, args),
            agent,
            task_ids=task_ids[env_id],
            seed=seed,
            progress=not args.quiet,
            desc=env_id,
        )
    return trajectories


def success_by_env(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for trajectory in trajectories:
        groups[trajectory.env_id].append(trajectory.success)
    return {env_id: sum(values) / len(values) for env_id, values in sorted(groups.items())}


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = [stage["name"] for stage in results["stages"]]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for env_id in results["envs"]:
        ax.plot(
            stages,
            [100 * s["eval_success"].get(env_id, math.nan) for s in results["stages"]],
            marker="o",
            label=env_id,
        )
    ax.set_ylabel("eval success (%)")
    ax.set_xlabel("stage")
    ax.set_title(
        "AgentEvol" + (" (DPO)" if results["args"]["dpo"] else "") + f" — {results['model']}"
    )
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


COUNT, NON_NEGATIVE = number_in(int, 1), number_in(int, 0)
ATTENTION_HEADS = 4
"""The tiny model's attention heads (``--hidden-size`` must be a multiple)."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=list(DEFAULT_ENVS))
    parser.add_argument("--config", help="JSON config overrides applied to every environment")
    parser.add_argument(
        "--bc-tasks", type=COUNT, default=60, help="expert trajectories per environment"
    )
    parser.add_argument(
        "--explore-tasks",
        type=COUNT,
        default=100,
        help="train instructions explored per environment (> bc-tasks)",
    )
    parser.add_argument("--k", type=COUNT, default=2, help="samples per instruction when exploring")
    parser.add_argument(
        "--iterations", type=NON_NEGATIVE, default=2, help="evolution iterations (M)"
    )
    parser.add_argument(
        "--eval-tasks", type=COUNT, default=20, help="eval-split tasks per environment"
    )
    parser.add_argument(
        "--dpo", action="store_true", help="learn with DPO on success/failure pairs instead"
    )
    parser.add_argument(
        "--model", help="a local Hugging Face checkpoint (default: a tiny model from scratch)"
    )
    parser.add_argument("--layers", type=COUNT, default=2)
    parser.add_argument("--hidden-size", type=COUNT, default=128)
    parser.add_argument("--vocab-size", type=COUNT, default=3000)
    parser.add_argument("--max-length", type=COUNT, default=2048)
    parser.add_argument("--epochs", type=COUNT, default=2)
    parser.add_argument("--batch-size", type=COUNT, default=8)
    parser.add_argument("--learning-rate", type=number_in(float, 0, above=True), default=1e-3)
    parser.add_argument(
        "--temperature",
        type=number_in(float, 0),
        default=1.0,
        help="sampling temperature when exploring",
    )
    parser.add_argument("--max-new-tokens", type=COUNT, default=48, help="tokens per reply")
    parser.add_argument("--max-format-errors", type=NON_NEGATIVE, default=2)
    parser.add_argument("--seed", type=NON_NEGATIVE, default=0)
    parser.add_argument("--out", default="runs/agentevol")
    parser.add_argument(
        "--no-copy", action="store_true", help="do not copy results to benchmarks/results/"
    )
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.hidden_size % ATTENTION_HEADS:
        parser.error(
            f"argument --hidden-size: {args.hidden_size} is not a multiple of the model's "
            f"{ATTENTION_HEADS} attention heads"
        )
    if args.explore_tasks <= args.bc_tasks:
        parser.error(
            "--explore-tasks must exceed --bc-tasks: exploration also covers instructions "
            "without expert data"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quiet:
        datasets.disable_progress_bars()
        transformers.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    timings: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        timings[name] = round(time.perf_counter() - since, 1)
        return time.perf_counter()

    probes = {env_id: env_factory(env_id, args)() for env_id in args.envs}
    explore_ids = {
        e: choose_tasks(p, "train", args.explore_tasks, args.seed) for e, p in probes.items()
    }
    bc_ids = {e: ids[: args.bc_tasks] for e, ids in explore_ids.items()}  # BC tasks are a subset
    eval_ids = {e: choose_tasks(p, "eval", args.eval_tasks, args.seed) for e, p in probes.items()}

    clock = time.perf_counter()
    expert = play(OracleAgent(), args.envs, bc_ids, args, args.seed)
    expert = [t for t in expert if t.success]
    (out / "expert.jsonl").unlink(missing_ok=True)
    for trajectory in expert:
        append_trajectory(out / "expert.jsonl", trajectory)
    clock = lap("collect_expert", clock)

    base = out / "base"
    build_base(args, expert, base)
    stages = []
    current = sft(base, weighted_learning_set(expert, [], args.seed), out / "bc", args)
    clock = lap("bc_train", clock)

    def evaluate(name: str, extra: dict[str, Any]) -> None:
        nonlocal clock
        model, tokenizer = load(current)
        trajectories = play(
            LocalModelAgent(model, tokenizer, max_new_tokens=args.max_new_tokens),
            args.envs,
            eval_ids,
            args,
            args.seed + 10_000,
        )
        stages.append({"name": name, "eval_success": success_by_env(trajectories), **extra})
        clock = lap(f"{name}_eval", clock)
        print(
            f"{name}: " + ", ".join(f"{e} {s:.0%}" for e, s in stages[-1]["eval_success"].items()),
            flush=True,
        )

    evaluate("bc", {"train_examples": len(expert)})
    bc_model = current
    for iteration in range(1, args.iterations + 1):
        model, tokenizer = load(current)
        explorer = LocalModelAgent(
            model,
            tokenizer,
            temperature=args.temperature,
            max_new_tokens=args.max_new_tokens,
            seed=args.seed + iteration,
        )
        repeated = {e: [t for t in ids for _ in range(args.k)] for e, ids in explore_ids.items()}
        collected = play(explorer, args.envs, repeated, args, args.seed + 1000 * iteration)
        clock = lap(f"iter{iteration}_explore", clock)
        explored = {"explored": len(collected), "explored_success": success_by_env(collected)}
        if args.dpo:
            pairs = preference_pairs(collected)
            current = dpo(bc_model, pairs, out / f"iter{iteration}", args) if pairs else current
            extra = {**explored, "preference_pairs": len(pairs)}
        else:
            examples = weighted_learning_set(expert, collected, args.seed + iteration)
            current = sft(base, examples, out / f"iter{iteration}", args)
            extra = {
                **explored,
                "train_examples": len(examples),
                "collected_kept": sum(e["source"] == "collected" for e in examples),
            }
        clock = lap(f"iter{iteration}_learn", clock)
        evaluate(f"iter{iteration}", extra)

    results = {
        "benchmark": "agentevol",
        "llmgym_version": llmgym.__version__,
        "model": args.model
        or f"tiny llama from scratch ({args.layers} layers, d={args.hidden_size}, "
        f"vocab {args.vocab_size})",
        "envs": args.envs,
        "args": vars(args),
        "expert_trajectories": len(expert),
        "stages": stages,
        "timings_s": {**timings, "total": round(time.perf_counter() - started, 1)},
    }
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    plot(results, out / "success.png")
    if not args.no_copy:
        target = Path(__file__).resolve().parent / "results" / "agentevol.json"
        target.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out / 'results.json'} and {out / 'success.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
