"""benchmarks/bench_utils.py: the machine facts every result JSON carries."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.bench_utils import cpu, machine, number_in

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


def test_number_in_gives_the_allowed_range() -> None:
    count, rate = number_in(int, 1), number_in(float, 0, 1, above=True)
    assert count("3") == 3 and rate("1") == 1.0 and rate("0.5") == 0.5
    for convert, text, message in [
        (count, "0", "0 is outside the allowed range [1, inf)"),
        (count, "2.5", "'2.5' is not an integer"),
        (rate, "0", "0 is outside the allowed range (0, 1]"),
        (rate, "1.01", "1.01 is outside the allowed range (0, 1]"),
        (rate, "nan?", "'nan?' is not a number"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError) as error:
            convert(text)
        assert str(error.value) == message
