"""The float kernels a portable training run pins, so that x86 machines compute its numbers alike.

Torch, MKL, oneDNN and numpy each pick their float kernels by the CPU they find (AVX2, AVX-512,
Intel or not), and kernels of different instruction sets sum in different orders: the same
command and seed then train different parameters on different machines
(``benchmarks/envgen_reproducibility.py`` measures which choices change a run). This module
imports nothing heavy, so a script can pin before numpy or torch is imported; they read these
variables once, when they load.
"""

from __future__ import annotations

import os
from typing import Any

PORTABLE_KERNELS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}
"""ATen's vectorised kernels at AVX2 whatever the CPU offers beyond it; MKL's matrix products on
its ``COMPATIBLE`` branch (its ``AVX2`` branch holds on Intel CPUs only: elsewhere MKL falls back
to choosing by CPU); oneDNN at most AVX2; numpy without its AVX-512 kernels."""


def pin() -> None:
    """Set :data:`PORTABLE_KERNELS` in this process's environment, replacing other values (a
    machine's own choice is what they remove). Effective only before numpy and torch are
    imported: :func:`settings` records what a run actually got."""
    os.environ.update(PORTABLE_KERNELS)


def settings(portable: bool) -> dict[str, Any]:
    """What a run's float kernels were: ``portable`` (pins asked for) or ``fast``, the variables
    of :data:`PORTABLE_KERNELS` as the run saw them, the instruction set of ATen's kernels, and
    whether the pins were in effect (all set, and ATen at AVX2)."""
    import torch

    environment = {name: os.environ.get(name) for name in PORTABLE_KERNELS}
    capability = torch.backends.cpu.get_cpu_capability()
    return {
        "kernels": "portable" if portable else "fast",
        "environment": environment,
        "torch_cpu_capability": capability,
        "pinned": environment == PORTABLE_KERNELS
        and capability == PORTABLE_KERNELS["ATEN_CPU_CAPABILITY"].upper(),
    }
