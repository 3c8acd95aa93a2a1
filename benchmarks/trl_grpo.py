"""GRPO with TRL on llmgym environments, end to end (``llmgym.integrations.trl``).

    pip install -e '.[trl]'
    python benchmarks/trl_grpo.py --tiny                 # CPU smoke run, offline, about a minute
    python benchmarks/trl_grpo.py --model PATH --steps 200 --envs llmgym/Wordle-v0

For each environment in ``--envs`` (default: Wordle, a text game with the one tool ``act``, and
Weather, a tool-use environment with its own tools), ``GRPOTrainer`` trains on
:func:`~llmgym.integrations.trl.task_dataset` (train split) with
:func:`~llmgym.integrations.trl.environment_factory` as its environment, which owns the reward
(``get_reward``: the episode's return). ``--horizon`` adds a
:class:`~llmgym.wrappers.HorizonCurriculum` moved by the trainer's step.

``--tiny`` builds a tiny random Llama and a byte-level BPE tokenizer trained on the
environments' prompts, with TRL's bundled Qwen2.5 chat template (which TRL recognises for tool
calling), so nothing is downloaded. A random model never writes a tool call, so in ``--tiny``
the first turn of every other rollout is replaced by the oracle's whole episode as tool calls (a
scripted policy): the tool path, the environment's reward (1 for those, 0 for the random ones)
and the GRPO update all run. ``--model PATH`` is the same
script on a real checkpoint (its own chat template must be one TRL knows), without scripting.

Prints, per environment, the mean reward and the tool-call rate (TRL's ``tools/call_frequency``:
tool calls per rollout) of each step, and writes them to ``benchmarks/results/trl_grpo.json``
(``--out``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llmgym.core.registry import optional_import

torch = optional_import("torch", extra="trl")
transformers = optional_import("transformers", extra="trl")
trl = optional_import("trl", extra="trl")
tokenizers = optional_import("tokenizers", extra="trl")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_utils import byte_level_tokenizer, number_in, write_json  # noqa: E402

from llmgym.envs.tools import parse_tool_call  # noqa: E402
from llmgym.integrations.trl import (  # noqa: E402
    LlmgymTRLEnv,
    environment_factory,
    horizon_callback,
    task_dataset,
)
from llmgym.wrappers import HorizonCurriculum  # noqa: E402

DEFAULT_ENVS = ("llmgym/Wordle-v0", "llmgym/Weather-v0")
QWEN_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def tiny_model(folder: Path, env_ids: Sequence[str], seed: int) -> None:
    """Save a tiny random Llama and a BPE tokenizer (trained on the environments' prompts) with
    TRL's Qwen2.5 chat template to ``folder``."""
    from trl.chat_template_utils import qwen2_5_chat_template

    texts = [qwen2_5_chat_template, '<tool_call>\n{"name": "act", "arguments": {}}\n</tool_call>']
    for env_id in env_ids:
        rows = task_dataset(env_id, n=1)
        texts.append(rows[0]["prompt"][0]["content"])
    tokenizer = byte_level_tokenizer(
        texts,
        2000,
        special_tokens=QWEN_TOKENS,
        pad_token="<|endoftext|>",
        eos_token="<|im_end|>",
        chat_template=qwen2_5_chat_template,
    )
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def oracle_calls(environment: LlmgymTRLEnv) -> list[dict[str, Any]]:
    """The oracle's whole episode from the current state, as native tool calls of
    ``environment``'s class (played on a copy, so the environment itself is untouched)."""
    env = copy.deepcopy(environment.env.unwrapped)
    calls = []
    for _ in range(64):
        action = env.oracle_action()  # type: ignore[attr-defined]
        if hasattr(environment, "act"):
            calls.append({"name": "act", "arguments": {"action": action}})
        else:
            parsed = parse_tool_call(action)
            if isinstance(parsed, str):
                raise RuntimeError(f"unparseable oracle call {action!r}: {parsed}")
            calls.append({"name": parsed.name, "arguments": parsed.arguments})
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return calls


def script_first_turns(trainer: Any) -> None:
    """Make the first turn of every other rollout the oracle's whole episode, as tool calls
    (``--tiny``: a random model never calls a tool)."""
    generate, single_turn = trainer._generate, trainer._generate_single_turn
    first = {"turn": False}

    def generate_scripted(prompts: list) -> Any:
        first["turn"] = True
        return generate(prompts)

    def single_turn_scripted(prompt_ids: list, *args: Any, **kwargs: Any) -> Any:
        completion_ids, logprobs = single_turn(prompt_ids, *args, **kwargs)
        if first["turn"]:
            first["turn"] = False
            tokenizer = trainer.processing_class
            for i, environment in enumerate(trainer.environments):
                if i % 2 == 0:
                    text = "".join(
                        f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
                        for call in oracle_calls(environment)
                    )
                    completion_ids[i] = tokenizer(text + "<|im_end|>", add_special_tokens=False)[
                        "input_ids"
                    ]
        return completion_ids, logprobs

    trainer._generate = generate_scripted
    trainer._generate_single_turn = single_turn_scripted


def train_on(env_id: str, model: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Run GRPO on ``env_id``; the per-step reward and tool-call rate."""
    curriculum = HorizonCurriculum(args.horizon) if args.horizon else None
    factory = environment_factory(env_id, curriculum=curriculum)
    config = trl.GRPOConfig(
        output_dir=str(out),
        max_steps=args.steps,
        per_device_train_batch_size=args.batch_size,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls,
        learning_rate=args.learning_rate,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=args.tiny,
        seed=args.seed,
        temperature=1.0,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        args=config,
        train_dataset=task_dataset(env_id, n=args.tasks),
        environment_factory=factory,
        callbacks=[horizon_callback(curriculum)] if curriculum else None,
    )
    if args.tiny:
        script_first_turns(trainer)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    steps = [
        {
            "step": log["step"],
            "reward": log.get("reward"),
            "tool_call_rate": log.get("tools/call_frequency"),
            "tool_failure_rate": log.get("tools/failure_frequency"),
            "grad_norm": log.get("grad_norm"),
        }
        for log in trainer.state.log_history
        if "reward" in log
    ]
    for step in steps:
        print(
            f"{env_id} step {step['step']}: reward {step['reward']:.3f}, "
            f"tool calls per rollout {step['tool_call_rate'] or 0:.2f}"
        )
    return {
        "env_id": env_id,
        "reward_column": factory.__name__,
        "reward_funcs": list(trainer.reward_func_names),
        "steps": steps,
        "train_seconds": round(seconds, 2),
    }


COUNT = number_in(int, 1)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tiny", action="store_true", help="a tiny random model, on CPU")
    source.add_argument("--model", help="a local Hugging Face checkpoint")
    parser.add_argument("--envs", default=",".join(DEFAULT_ENVS), help="comma-separated ids")
    parser.add_argument("--steps", type=COUNT, default=2, help="GRPO steps per environment")
    parser.add_argument("--tasks", type=COUNT, default=64, help="train tasks in the dataset")
    parser.add_argument("--batch-size", type=COUNT, default=4, help="rollouts per device step")
    parser.add_argument(
        "--num-generations", type=number_in(int, 2), default=2, help="rollouts per prompt"
    )
    parser.add_argument("--max-completion-length", type=COUNT, default=None)
    parser.add_argument("--max-tool-calls", type=COUNT, default=None, help="per rollout")
    parser.add_argument("--learning-rate", type=number_in(float, 0, above=True), default=1e-6)
    parser.add_argument(
        "--horizon",
        type=json.loads,
        default=None,
        help='a horizon curriculum by training step, e.g. "[[0, 3], [50, 6]]"',
    )
    parser.add_argument("--seed", type=number_in(int, 0), default=0)
    parser.add_argument("--out", default="benchmarks/results/trl_grpo.json")
    args = parser.parse_args(argv)
    if args.tiny:
        args.batch_size = 2
        args.max_completion_length = args.max_completion_length or 256
        args.max_tool_calls = args.max_tool_calls or 3
        args.learning_rate = 1e-3
    else:
        args.max_completion_length = args.max_completion_length or 2048
    if args.batch_size % args.num_generations:
        parser.error(
            f"argument --num-generations: {args.num_generations} does not divide the batch of "
            f"{args.batch_size} rollouts (--batch-size; 2 with --tiny): GRPO compares the "
            "rollouts of one prompt within a batch"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    env_ids = [e.strip() for e in args.envs.split(",") if e.strip()]
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        model = args.model
        if args.tiny:
            model = str(Path(scratch) / "tiny")
            tiny_model(Path(model), env_ids, args.seed)
        for env_id in env_ids:
            results.append(train_on(env_id, model, args, Path(scratch) / "run"))
    write_json(
        args.out,
        {
            "benchmark": "trl_grpo",
            "model": "tiny random Llama (2 layers, d=32), scripted first turns"
            if args.tiny
            else args.model,
            "trl_version": trl.__version__,
            "settings": {
                k: getattr(args, k)
                for k in ("steps", "tasks", "batch_size", "num_generations", "horizon")
            }
            | {"max_completion_length": args.max_completion_length},
            "environments": results,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
