"""The serving wire format, without a server: numpy arrays travel exactly through ``dumps`` and
``loads``, malformed encoded arrays are refused with a precise message, and every servable space
is rebuilt equal to the original (through JSON, and as Ray passes it: without JSON)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gymnasium import spaces

from llmgym.serving.hosting import HostedEnv
from llmgym.serving.protocol import (
    ARRAY_DTYPES,
    ARRAY_KEY,
    InvalidRequestError,
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
