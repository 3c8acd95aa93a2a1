"""``llmgym render``: one episode of a trajectory file as an animated GIF.

An episode recorded with frames (:mod:`llmgym.runner.frames`) becomes its frames, enlarged
without smoothing; any other episode becomes its text observations, one image each (the text
render of the episode). Needs the [report] extra (Pillow).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from llmgym.core.registry import optional_import
from llmgym.runner.frames import read_frames
from llmgym.viewer.records import trajectory_record

__all__ = ["episode_record", "write_gif"]

_TEXT_COLUMNS = 100
_TEXT_LINES = 48


def episode_record(path: str | os.PathLike[str], episode: int) -> dict[str, Any]:
    """The ``episode``-th trajectory (from 0) of a trajectory file: lines that hold none are not
    counted, as in ``llmgym view``.

    Raises:
        ValueError: the file has fewer episodes.
    """
    if episode < 0:
        raise ValueError(f"--episode {episode}: episodes are numbered from 0")
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            try:
                record = trajectory_record(line)[0]
            except ValueError:
                continue
            if count == episode:
                return record
            count += 1
    raise ValueError(f"{os.fspath(path)} holds {count} episodes; --episode {episode} is not one")


def write_gif(
    path: str | os.PathLike[str],
    episode: int,
    out: str | os.PathLike[str],
    *,
    scale: int = 4,
    frame_ms: int = 150,
) -> int:
    """Write episode ``episode`` of the trajectory file ``path`` as a GIF to ``out`` (frames
    ``scale`` times larger, ``frame_ms`` milliseconds each); return the number of frames."""
    if scale < 1 or frame_ms < 10:
        raise ValueError(f"scale={scale} must be >= 1 and frame_ms={frame_ms} >= 10")
    image_module = optional_import("PIL.Image", extra="report", package="Pillow")
    record = episode_record(path, episode)
    pngs = read_frames(path, record.get("metadata") or {})
    if pngs:
        images = []
        for png in pngs:
            image = image_module.open(io.BytesIO(png)).convert("RGB")
            size = (image.width * scale, image.height * scale)
            images.append(image.resize(size, image_module.Resampling.NEAREST))
    else:
        texts = [turn.get("observation", "") for turn in record.get("turns") or []]
        images = [_text_image(text) for text in [*texts, record.get("final_observation", "")]]
        frame_ms = max(frame_ms, 700)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    images[0].save(
        out, save_all=True, append_images=images[1:], duration=frame_ms, loop=0, optimize=False
    )
    return len(images)


def _text_image(text: str) -> Any:
    """A text observation drawn in Pillow's built-in font on a white page."""
    image_module = optional_import("PIL.Image", extra="report", package="Pillow")
    draw_module = optional_import("PIL.ImageDraw", extra="report", package="Pillow")
    lines = [line[:_TEXT_COLUMNS] for line in str(text).splitlines()[:_TEXT_LINES]] or [""]
    image = image_module.new("RGB", (8 + 6 * _TEXT_COLUMNS, 8 + 12 * _TEXT_LINES), "white")
    draw = draw_module.Draw(image)
    for number, line in enumerate(lines):
        draw.text((4, 4 + 12 * number), line, fill="black")
    return image
