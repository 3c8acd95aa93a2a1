"""Recorded frames: the pictures of an episode, kept in a file next to its trajectories.

With ``RecordTrajectory(env, path, frames=True)`` (or ``llmgym eval/collect --record-frames``)
a frame is taken at the reset and after every step: a pixel environment's observation
(``CrafterPixels-v0``, ``HeistPixels-v0``, ``ProcgenHeist-v0``), or the picture a text
environment draws of its state (``Crafter-v0`` and ``Heist-v0`` draw what their pixel variants
show; see :meth:`~llmgym.TextEnv.pixel_frame`). Text environments that draw nothing record no
frames: their observations, already in the trajectory, are the text renders the viewer replays.

Frames are PNG-encoded and appended, one JSON line per episode, to a *frames file* beside the
trajectory file (``t.jsonl`` → ``t.jsonl.frames``)::

    {"schema": "llmgym.frames.v1", "env_id": "...", "task_id": "...", "seed": 3,
     "agent": "oracle", "format": "png", "frames": ["<base64 PNG>", ...]}

The trajectory record itself keeps its schema (``llmgym.trajectory.v1``) and says where its
frames are in ``metadata["frames"]``: ``{"file": "t.jsonl.frames", "offset": 1234,
"length": 5678, "count": 12, "format": "png"}`` (the byte range of the line; ``file`` is
relative to the trajectory file's folder). ``count`` is the number of turns plus one: frame
``i`` is what the agent saw before turn ``i``, the last one the final state. Readers that do not
know about frames see an ordinary trajectory.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = [
    "FRAMES_SCHEMA",
    "FrameSource",
    "encode_png",
    "frame_source",
    "frames_path",
    "read_frames",
    "write_frames",
]

FRAMES_SCHEMA = "llmgym.frames.v1"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_LOCK = threading.Lock()

FrameSource = Callable[[], "np.ndarray | None"]
"""Returns the current frame of an environment (``uint8`` RGB), or ``None``."""


def encode_png(frame: np.ndarray) -> bytes:
    """A ``uint8`` RGB (height x width x 3) or grey (height x width) image as PNG bytes (no
    dependency beyond the standard library)."""
    image = np.ascontiguousarray(frame, dtype=np.uint8)
    if image.ndim == 2:
        colour_type = 0
    elif image.ndim == 3 and image.shape[2] == 3:
        colour_type = 2
    else:
        raise ValueError(
            f"a frame is height x width x 3 (RGB) or height x width, not {frame.shape}"
        )
    height, width = image.shape[:2]
    rows = image.reshape(height, -1)
    raw = np.hstack([np.zeros((height, 1), np.uint8), rows]).tobytes()
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        _PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 6))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def frame_source(env: gym.Env) -> FrameSource:
    """What records ``env``'s frames: its :meth:`~llmgym.TextEnv.pixel_frame` (``None`` for an
    environment that draws nothing or has no such method, e.g. a remote one)."""
    unwrapped = env.unwrapped

    def take() -> np.ndarray | None:
        draw = getattr(unwrapped, "pixel_frame", None)
        return draw() if callable(draw) else None

    return take


def frames_path(trajectories: str | os.PathLike[str]) -> Path:
    """The frames file of a trajectory file: ``t.jsonl`` → ``t.jsonl.frames``."""
    return Path(os.fspath(trajectories) + ".frames")


def write_frames(
    trajectories: str | os.PathLike[str], record: dict[str, Any], frames: list[bytes]
) -> dict[str, Any]:
    """Append one episode's PNG ``frames`` to the frames file of ``trajectories``; return the
    ``metadata["frames"]`` entry that finds them (``record`` is the trajectory's dict)."""
    path = frames_path(trajectories)
    line = (
        json.dumps(
            {
                "schema": FRAMES_SCHEMA,
                "env_id": record.get("env_id"),
                "task_id": record.get("task_id"),
                "seed": record.get("seed"),
                "agent": record.get("agent"),
                "format": "png",
                "frames": [base64.b64encode(frame).decode("ascii") for frame in frames],
            }
        ).encode("utf-8")
        + b"\n"
    )
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            offset = handle.tell()
            handle.write(line)
    return {
        "file": path.name,
        "offset": offset,
        "length": len(line),
        "count": len(frames),
        "format": "png",
    }


def read_frames(trajectories: str | os.PathLike[str], metadata: dict[str, Any]) -> list[bytes]:
    """The PNG frames a trajectory's ``metadata`` points to (``[]`` when it has none).

    Raises:
        ValueError: the frames file does not hold a frames record at that place.
    """
    where = metadata.get("frames")
    if not where:
        return []
    path = Path(os.fspath(trajectories)).parent / Path(str(where["file"])).name
    with open(path, "rb") as handle:
        handle.seek(int(where["offset"]))
        line = handle.read(int(where["length"]))
    try:
        data = json.loads(line)
        frames = data["frames"] if data.get("schema") == FRAMES_SCHEMA else None
        if isinstance(frames, list):
            return [base64.b64decode(frame, validate=True) for frame in frames]
    except (ValueError, TypeError, AttributeError, RecursionError):
        pass  # not JSON, not a frames record, or not base64: answered below
    raise ValueError(f"{path} holds no {FRAMES_SCHEMA} record at byte {where['offset']}")
