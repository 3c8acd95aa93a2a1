"""benchmarks/bench_utils.py: the machine facts every result JSON carries."""

from __future__ import annotations

from benchmarks.bench_utils import cpu, machine

AVX2_FLAGS = "fpu sse sse2 ssse3 cx16 sse4_1 sse4_2 popcnt movbe avx fma bmi1 bmi2 avx2"


def cpuinfo(model: str, flags: str) -> str:
    """Two logical processors as Linux's /proc/cpuinfo lists them."""
    core = f"processor\t: {{}}\nmodel name\t: {model}\nflags\t\t: {flags}\n"
    return "\n".join(core.format(index) for index in range(2))


def test_cpu_names_the_model_and_its_x86_64_level() -> None:
    avx2 = cpuinfo("Intel(R) Xeon(R) CPU @ 2.20GHz", AVX2_FLAGS)
    assert cpu(avx2) == {"cpu": "Intel(R) Xeon(R) CPU @ 2.20GHz", "cpu_level": "x86-64-v3"}
    avx512 = cpuinfo("AMD EPYC", AVX2_FLAGS + " avx512f avx512bw avx512cd avx512dq avx512vl")
    assert cpu(avx512)["cpu_level"] == "x86-64-v4"
    # AVX-512 flags without AVX2 do not make a level: each level needs the ones below it
    no_avx2 = cpuinfo("odd", "sse4_1 sse4_2 ssse3 popcnt cx16 avx512f")
    assert cpu(no_avx2)["cpu_level"] == "x86-64-v2"
    assert cpu(cpuinfo("old", "fpu sse sse2"))["cpu_level"] == "x86-64"


def test_cpu_without_a_model_or_flags_says_nothing_of_them() -> None:
    assert cpu("") == {}
    assert cpu("processor\t: 0\nFeatures\t: fp asimd\n") == {}


def test_machine_carries_this_cpu() -> None:
    assert {key: machine()[key] for key in cpu()} == cpu()
