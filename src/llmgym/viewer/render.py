"""``llmgym render``: one episode of a trajectory file as an animated GIF.

An episode recorded with frames (:mod:`llmgym.runner.frames`) becomes its frames, enlarged
without smoothing, :data:`PICTURE_FRAME_MS` each; any other episode becomes one page per turn,
:data:`TEXT_FRAME_MS` each: the observation the agent saw and the action it took (the last page:
the final observation and the outcome), wrapped in a monospaced font on a page fitted to the
episode's longest text, within :data:`TEXT_COLUMNS` by :data:`TEXT_LINES`. Needs the [report]
extra (Pillow; matplotlib brings the font, DejaVu Sans Mono).
"""

from __future__ import annotations

import io
import os
import textwrap
from pathlib import Path
from typing import Any

from llmgym.core.registry import optional_import
from llmgym.errors import ConfigError
from llmgym.runner.frames import read_frames
from llmgym.viewer.records import trajectory_record

__all__ = [
    "PICTURE_FRAME_MS",
    "TEXT_COLUMNS",
    "TEXT_FRAME_MS",
    "TEXT_LINES",
    "episode_record",
    "write_gif",
]

PICTURE_FRAME_MS = 150
"""The default time of a recorded frame (a picture), in milliseconds."""
TEXT_FRAME_MS = 2000
"""The default time of a text page, in milliseconds: long enough to read an action and glance at
the observation."""
TEXT_COLUMNS = 100
"""The widest a text page gets, in characters; longer lines wrap."""
TEXT_LINES = 48
"""The most lines of an observation a page shows; the rest is counted in a last line."""
MAX_SCALE = 16
"""The largest ``scale`` of recorded frames (a 64-pixel frame becomes 1,024 pixels)."""

_FONT_SIZE = 16  # pixels: as a terminal's text on a laptop screen
_ACTION_LINES = 4
_MARGIN = 12
_INK, _FAINT, _ACTION, _PAGE = (20, 20, 20), (110, 110, 110), (0, 70, 170), (255, 255, 255)


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
    frame_ms: int | None = None,
) -> int:
    """Write episode ``episode`` of the trajectory file ``path`` as a GIF to ``out``; return the
    number of frames.

    Args:
        scale: Recorded frames are enlarged this many times (1 to :data:`MAX_SCALE`).
        frame_ms: Milliseconds per frame, 20 or more (browsers show shorter delays as 100 ms);
            default :data:`PICTURE_FRAME_MS` for recorded frames, :data:`TEXT_FRAME_MS` for
            text pages.

    Raises:
        ConfigError: ``scale`` or ``frame_ms`` is out of its range.
        ValueError: the file has no such episode.
    """
    if not 1 <= scale <= MAX_SCALE:
        raise ConfigError("scale", f"must be from 1 to {MAX_SCALE}, got {scale}")
    if frame_ms is not None and frame_ms < 20:
        raise ConfigError("frame_ms", f"must be 20 or more, got {frame_ms}")
    image_module = optional_import("PIL.Image", extra="report", package="Pillow")
    record = episode_record(path, episode)
    pngs = read_frames(path, record.get("metadata") or {})
    if pngs:
        images = []
        for png in pngs:
            image = image_module.open(io.BytesIO(png)).convert("RGB")
            size = (image.width * scale, image.height * scale)
            images.append(image.resize(size, image_module.Resampling.NEAREST))
        duration = frame_ms or PICTURE_FRAME_MS
    else:
        images = _text_pages(record)
        duration = frame_ms or TEXT_FRAME_MS
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    images[0].save(
        out, save_all=True, append_images=images[1:], duration=duration, loop=0, optimize=False
    )
    return len(images)


def _text_pages(record: dict[str, Any]) -> list[Any]:
    """A text episode's pages: per turn the observation and the action taken on it, then the
    final observation and the outcome; all of one size, that of the largest."""
    turns = record.get("turns") or []
    pages = []
    for number, turn in enumerate(turns, start=1):
        action = turn.get("action") or turn.get("reply") or ""
        notes = [note for note in _notes(turn) if note]
        pages.append(
            _Page(
                f"{record.get('env_id', '')}  {record.get('task_id', '')}  turn {number}/"
                f"{len(turns)}",
                turn.get("observation", ""),
                f"> {action}" + (f"   ({', '.join(notes)})" if notes else ""),
            )
        )
    pages.append(
        _Page(
            f"{record.get('env_id', '')}  {record.get('task_id', '')}  end",
            record.get("final_observation", ""),
            _outcome(record),
        )
    )
    return _draw(pages)


def _notes(turn: dict[str, Any]) -> tuple[str, ...]:
    reward = turn.get("reward") or 0.0
    return (
        f"reward {reward:+g}" if reward else "",
        "invalid action" if turn.get("invalid_action") else "",
        "format error" if turn.get("format_error") else "",
    )


def _outcome(record: dict[str, Any]) -> str:
    if record.get("error"):
        return f"error: {record['error']}"
    outcome = "success" if record.get("success") else "no success"
    ended = "out of turns" if record.get("truncated") else "episode over"
    return f"{ended}: {outcome}, total reward {record.get('total_reward') or 0.0:g}"


class _Page:
    """The lines of one page: a header, the observation (wrapped and cut to
    :data:`TEXT_LINES`), and the action or outcome (wrapped, cut to a few lines)."""

    def __init__(self, header: str, observation: str, action: str) -> None:
        self.header = _wrap(header)[:1]
        self.observation = _wrap(observation)
        if len(self.observation) > TEXT_LINES:
            more = len(self.observation) - TEXT_LINES + 1
            self.observation = [*self.observation[: TEXT_LINES - 1], f"... {more} more lines"]
        self.action = _wrap(action)[:_ACTION_LINES]

    def columns(self) -> int:
        return max(len(line) for line in [*self.header, *self.observation, *self.action])

    def lines(self) -> int:
        return len(self.header) + len(self.observation) + len(self.action) + 2  # 2 gaps


def _wrap(text: str) -> list[str]:
    """``text`` as lines of at most :data:`TEXT_COLUMNS` characters (indents kept)."""
    lines: list[str] = []
    for line in str(text).expandtabs(4).splitlines() or [""]:
        lines += textwrap.wrap(line, TEXT_COLUMNS) or [""]
    return [line.rstrip() for line in lines]


def _draw(pages: list[_Page]) -> list[Any]:
    """Each page drawn on a white image fitted to the largest page."""
    image_module = optional_import("PIL.Image", extra="report", package="Pillow")
    draw_module = optional_import("PIL.ImageDraw", extra="report", package="Pillow")
    font = _font()
    advance = font.getlength("M")
    ascent, descent = font.getmetrics()
    line_height = ascent + descent + 3
    columns = max(page.columns() for page in pages)
    lines = max(page.lines() for page in pages)
    size = (2 * _MARGIN + round(advance * max(columns, 40)), 2 * _MARGIN + line_height * lines)
    images = []
    for page in pages:
        image = image_module.new("RGB", size, _PAGE)
        draw = draw_module.Draw(image)
        y = _MARGIN
        for block, colour in ((page.header, _FAINT), (page.observation, _INK)):
            for line in block:
                draw.text((_MARGIN, y), line, fill=colour, font=font)
                y += line_height
            y += line_height // 2
        y = size[1] - _MARGIN - line_height * len(page.action)  # the action at the foot
        draw.line((_MARGIN, y - line_height // 2, size[0] - _MARGIN, y - line_height // 2), _FAINT)
        for line in page.action:
            draw.text((_MARGIN, y), line, fill=_ACTION, font=font)
            y += line_height
        images.append(image)
    return images


def _font() -> Any:
    """DejaVu Sans Mono (matplotlib's copy) at :data:`_FONT_SIZE` pixels: a monospaced font, so
    that the grids of text environments (mazes, boards) stay aligned."""
    font_module = optional_import("PIL.ImageFont", extra="report", package="Pillow")
    matplotlib = optional_import("matplotlib", extra="report")
    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSansMono.ttf"
    return font_module.truetype(str(path), _FONT_SIZE)
