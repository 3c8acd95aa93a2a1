"""The serving wire format, without a server: numpy arrays travel exactly through ``dumps`` and
``loads``, malformed encoded arrays are refused with a precise message, every servable space is
rebuilt equal to the original (through JSON, and as Ray passes it: without JSON), and a malformed
or absurd space description (a server the client does not trust) is refused before anything is
allocated, naming the field."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from llmgym.errors import InvalidRequestError
from llmgym.serving.hosting import HostedEnv
from llmgym.serving.protocol import (
    ARRAY_DTYPES,
    ARRAY_KEY,
    dumps,
    loads,
    space_from_dict,
    space_to_dict,
)


def _same(received: np.ndarray, sent: np.ndarray) -> bool:
    return (
        isinstance(received, np.ndarray)
        and received.dtype == sent.dtype
        and received.shape == sent.shape
        and received.tobytes() == sent.tobytes()
    )


@pytest.mark.parametrize("dtype", ARRAY_DTYPES)
def test_arrays_of_every_dtype_travel_exactly(dtype: str) -> None:
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=2 * 3 * 4 * np.dtype(dtype).itemsize, dtype=np.uint8)
    sent = raw.view(dtype).reshape(2, 3, 4)  # every bit pattern, NaNs and subnormals included
    received = loads(dumps({"observation": sent}))["observation"]
    assert _same(received, sent)
    assert received.flags.writeable and received.flags.c_contiguous


def test_views_byte_orders_and_odd_shapes_travel_exactly() -> None:
    frame = np.arange(64 * 64 * 3, dtype=np.uint8).reshape(64, 64, 3)
    for sent in (
        frame[::2, ::-3],  # a non-contiguous view
        np.asfortranarray(frame),
        np.zeros((0, 5), np.float32),
        np.array(7, np.int16),  # 0-d
        np.array([True, False]),
    ):
        assert _same(loads(dumps(sent)), sent)
    big_endian = np.arange(6, dtype=">f8").reshape(2, 3)
    received = loads(dumps(big_endian))
    assert received.dtype == np.float64 and np.array_equal(received, big_endian)
    nested = loads(dumps({"info": {"frames": [frame, frame[0]], "n": np.int64(3)}}))["info"]
    assert _same(nested["frames"][1], frame[0]) and nested["n"] == 3


def test_a_frame_costs_a_third_more_than_its_bytes() -> None:
    frame = np.zeros((64, 64, 3), np.uint8)
    encoded = json.loads(dumps(frame))
    assert encoded["dtype"] == "uint8" and encoded["shape"] == [64, 64, 3]
    assert len(dumps(frame)) < 1.34 * frame.nbytes + 100


def test_arrays_of_other_dtypes_become_lists() -> None:
    assert loads(dumps(np.array(["a", "bc"]))) == ["a", "bc"]


@pytest.mark.parametrize(
    ("encoded", "message"),
    [
        ({ARRAY_KEY: "AAA=", "dtype": "uint8"}, "exactly the keys"),
        ({ARRAY_KEY: "AAA=", "dtype": "uint8", "shape": [2], "x": 1}, "exactly the keys"),
        ({ARRAY_KEY: "AAA=", "dtype": "object", "shape": [2]}, "dtype 'object' is not allowed"),
        ({ARRAY_KEY: "AAA=", "dtype": "uint8", "shape": [-2]}, "non-negative integers"),
        ({ARRAY_KEY: "AAA=", "dtype": "uint8", "shape": [True, 2]}, "non-negative integers"),
        ({ARRAY_KEY: "AAA=", "dtype": "uint8", "shape": "2"}, "non-negative integers"),
        ({ARRAY_KEY: "A?A=", "dtype": "uint8", "shape": [2]}, "base64"),
        ({ARRAY_KEY: 42, "dtype": "uint8", "shape": [2]}, "base64"),
        ({ARRAY_KEY: "AAA=", "dtype": "uint8", "shape": [3]}, "has 3 bytes, but"),
        ({ARRAY_KEY: "AAA=", "dtype": "uint16", "shape": [2]}, "has 4 bytes, but"),
        ({ARRAY_KEY: "", "dtype": "uint8", "shape": [1] * 80 + [0]}, "array shape"),
    ],
)
def test_malformed_arrays_are_refused(encoded: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loads(json.dumps({"action": encoded}))


@pytest.mark.parametrize(
    "space",
    [
        spaces.Box(0, 255, (64, 64, 3), np.uint8),
        spaces.Box(-1.5, 2.25, (3,), np.float32),
        spaces.Box(-np.inf, np.inf, (2, 2), np.float64),
        spaces.Box(np.array([0, -1], np.float32), np.array([1, np.inf], np.float32)),
        spaces.Box(0, 1, (0,), np.float16),
        spaces.Discrete(17),
        spaces.Discrete(5, start=-2),
        spaces.Discrete(3, dtype=np.int32),
        spaces.MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [-1, 0]]),
        spaces.MultiDiscrete([3, 3], dtype=np.int8),
        spaces.MultiBinary(4),
        spaces.MultiBinary([2, 3]),
        spaces.Text(12, min_length=2, charset="abc"),
    ],
    ids=repr,
)
def test_servable_spaces_are_rebuilt_equal(space: spaces.Space) -> None:
    over_json = space_from_dict(loads(dumps(space_to_dict(space))))
    as_ray_passes_it = space_from_dict(space_to_dict(space))
    for rebuilt in (over_json, as_ray_passes_it):
        assert rebuilt == space and type(rebuilt) is type(space)
        assert rebuilt.dtype == space.dtype and rebuilt.shape == space.shape
        if isinstance(space, spaces.Box):  # Box.__eq__ only compares bounds approximately
            assert _same(rebuilt.low, space.low) and _same(rebuilt.high, space.high)
        assert space.contains(rebuilt.sample())


def test_uniform_bounds_are_written_as_numbers() -> None:
    box = json.loads(dumps(space_to_dict(spaces.Box(0, 255, (64, 64, 3), np.uint8))))
    assert box == {"type": "Box", "shape": [64, 64, 3], "dtype": "uint8", "low": 0, "high": 255}
    unbounded = json.loads(dumps(space_to_dict(spaces.Box(-np.inf, 1, (2,)))))
    assert unbounded["low"][ARRAY_KEY] and unbounded["high"] == 1


def test_other_spaces_cannot_be_served() -> None:
    with pytest.raises(InvalidRequestError, match="Tuple spaces cannot be served; servable: Text"):
        space_to_dict(spaces.Tuple([spaces.Discrete(2)]))
    with pytest.raises(ValueError, match="cannot build"):
        space_from_dict({"type": "Graph"})


def _box(**fields: object) -> dict:
    return {"type": "Box", "shape": [2], "dtype": "float32", "low": 0, "high": 1, **fields}


def _text(**fields: object) -> dict:
    return {"type": "Text", "max_length": 10, "min_length": 0, "charset": "ab", **fields}


def _discrete(**fields: object) -> dict:
    return {"type": "Discrete", "n": 3, "start": 0, "dtype": "int64", **fields}


def _multi_discrete(**fields: object) -> dict:
    return {"type": "MultiDiscrete", "nvec": [2, 3], "start": [0, 0], **fields}


REFUSED_SPACES = [
    (_box(shape=[100_000, 100_000]), "Box.shape .* 10000000000 elements, more than the 67108864"),
    (_box(shape=[2**26 + 1], dtype="uint8"), "Box.shape"),
    (_box(shape=[-3]), r"Box.shape\[0\] must be at least 0"),
    (_box(shape=[1] * 33), "Box.shape must be a list of at most 32"),
    (_box(shape="22"), "Box.shape must be a list"),
    (_box(shape=[2.0]), r"Box.shape\[0\] must be an integer"),
    (_box(dtype="object"), "Box.dtype 'object' is not allowed"),
    (_box(dtype="complex64"), "Box.dtype 'complex64' is not allowed"),
    (_box(low=[0, 0, 0]), r"Box.low has shape \[3\], the Box \[2\]"),
    (_box(high="x"), "Box.high"),
    (_box(high=[[1], [1, 2]]), "Box.high"),
    (_box(low=2, high=1), "low values must be less than or equal to high"),
    (_text(max_length=5 * 10**9), "Text.max_length: 5000000000 characters, more than"),
    (_text(max_length=1.5), "Text.max_length must be an integer"),
    (_text(min_length=-1), "Text.min_length must be at least 0"),
    (_text(min_length=11), "Text.min_length 11 is over Text.max_length 10"),
    (_text(charset=["a"]), "Text.charset must be a non-empty string"),
    (_discrete(n=-1), "Discrete.n must be at least 1"),
    (_discrete(n=True), "Discrete.n must be an integer"),
    (_discrete(n=2**70), "leave the range of int64"),
    (_discrete(n=300, dtype="uint8"), "leave the range of uint8"),
    (_discrete(dtype="float32"), "Discrete.dtype 'float32' is not allowed"),
    (_multi_discrete(nvec=[2, 0]), "MultiDiscrete.nvec must be positive"),
    (_multi_discrete(nvec=[2.5, 3]), "MultiDiscrete.nvec must hold integers"),
    (_multi_discrete(start=[0]), r"MultiDiscrete.start has shape \[1\], nvec \[2\]"),
    (
        _multi_discrete(nvec={ARRAY_KEY: "", "dtype": "int8", "shape": [2**30]}),
        "MultiDiscrete.nvec.shape",
    ),
    ({"type": "MultiBinary", "n": [2**20, 2**20]}, "MultiBinary.n .* more than the 67108864"),
    ({"type": "MultiBinary", "n": 0}, "MultiBinary.n must be at least 1"),
    ({"type": "MultiBinary", "n": "4"}, "MultiBinary.n must be an integer"),
    ({"type": "Discrete", "start": 0, "dtype": "int64"}, "Discrete space's description has no 'n'"),
    ({"type": "Graph"}, "a Graph space, which this client cannot build"),
    ({}, "a space description is a JSON object with a type"),
    ([1, 2], "a space description is a JSON object with a type"),
]


@pytest.mark.parametrize(("description", "message"), REFUSED_SPACES, ids=repr)
def test_malformed_or_absurd_spaces_are_refused_before_allocating(
    description: Any, message: str
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=message):
            space_from_dict(description)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"{peak} bytes allocated"


def test_numpy_integers_in_a_description_are_accepted() -> None:
    # Ray passes descriptions without JSON: sizes may be numpy integers
    assert space_from_dict(_discrete(n=np.int64(3))) == spaces.Discrete(3)
    multi = {"type": "MultiBinary", "n": [np.int64(2), np.int32(3)]}
    assert space_from_dict(multi) == spaces.MultiBinary([2, 3])


def test_a_hosted_pixel_environment_describes_its_spaces() -> None:
    host = HostedEnv("llmgym/HeistPixels-v0")
    description = loads(dumps(host.describe()))
    assert description["observation_space"] == {
        "type": "Box",
        "shape": [64, 64, 3],
        "dtype": "uint8",
        "low": 0,
        "high": 255,
    }
    assert description["action_space"] == {"type": "Discrete", "n": 4, "start": 0, "dtype": "int64"}
    observation, _ = host.reset(seed=0)
    assert _same(loads(dumps(observation)), observation)
    host.close()
