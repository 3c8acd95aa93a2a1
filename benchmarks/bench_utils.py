"""Helpers shared by the benchmark scripts: one CPU core, machine facts, writing results."""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import llmgym
from llmgym.envs.webarena.live import CHROMIUM_ARGS

__all__ = ["cpu", "machine", "number_in", "pin_to_one_core", "write_json"]


def number_in(
    kind: type[int] | type[float], low: float, high: float | None = None, *, above: bool = False
) -> Callable[[str], Any]:
    """An argparse ``type``: ``kind`` within ``[low, high]`` (``(low, high]`` when ``above``),
    else an error that gives the allowed range (argparse adds the flag's name)."""
    allowed = f"{'(' if above else '['}{low}, {'inf)' if high is None else f'{high}]'}"
    name = "an integer" if kind is int else "a number"

    def convert(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {name}") from None
        if value < low or (above and value == low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is outside the allowed range {allowed}")
        return value

    return convert


def pin_to_one_core() -> None:
    """Run this process on one CPU core (where the OS allows it), as the targets assume."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


X86_LEVELS = {
    "x86-64-v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
    "x86-64-v3": {"avx", "avx2", "bmi1", "bmi2", "fma", "movbe"},
    "x86-64-v2": {"sse4_1", "sse4_2", "ssse3", "popcnt", "cx16"},
}
"""The flags (as ``/proc/cpuinfo`` names them) that mark each x86-64 micro-architecture level;
a level also needs every level below it."""


def cpu(cpuinfo: str | None = None) -> dict[str, str]:
    """The CPU's model name and its x86-64 level (``/proc/cpuinfo``; empty where there is none),
    which decide the float kernels a library picks when nothing pins them."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return {}
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    facts = {"cpu": fields["model name"]} if "model name" in fields else {}
    if "flags" in fields:
        flags = set(fields["flags"].split())
        level = "x86-64"
        for name, needed in reversed(X86_LEVELS.items()):
            if not needed <= flags:
                break
            level = name
        facts["cpu_level"] = level
    return facts


def machine() -> dict[str, Any]:
    """What a figure was measured on (the CPU's model and x86-64 level among it), including how
    busy the machine was (load average)."""
    facts: dict[str, Any] = {
        "python": platform.python_version(),
        "processor": platform.machine(),
        "cpus": os.cpu_count(),
        **cpu(),
    }
    if hasattr(os, "getloadavg"):
        facts["load_average_1m"] = round(os.getloadavg()[0], 2)
    return facts


def write_json(path: str | os.PathLike[str], payload: dict[str, Any]) -> Path:
    """Write ``payload`` (with ``llmgym_version`` and ``machine`` added unless present) as JSON."""
    payload = {"llmgym_version": llmgym.__version__, "machine": machine(), **payload}
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {target}")
    return target


def byte_level_tokenizer(
    texts: list[str],
    vocab_size: int,
    *,
    special_tokens: list[str],
    pad_token: str,
    eos_token: str,
    chat_template: str,
) -> Any:
    """A byte-level BPE tokenizer trained offline on ``texts``, with ``chat_template`` (for the
    tiny models the reference training scripts build; needs ``tokenizers`` and
    ``transformers``)."""
    import tokenizers
    import transformers

    model = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token=None))
    model.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    model.train_from_iterator(texts, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=model, pad_token=pad_token, eos_token=eos_token
    )
    tokenizer.chat_template = chat_template
    return tokenizer


CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium, which the browser tests, benchmarks and screenshot scripts drive (never a
browser Playwright downloads)."""


def launch_chromium(playwright: Any) -> Any:
    """Headless Chromium from the system, through Playwright."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
