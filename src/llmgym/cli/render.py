"""``llmgym render``: an episode of a trajectory file as an animated GIF."""

from __future__ import annotations

import argparse

from llmgym.cli.common import integer
from llmgym.viewer.render import MAX_SCALE, PICTURE_FRAME_MS, TEXT_FRAME_MS, write_gif


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "render", help="an episode of a trajectory file as an animated GIF ([report] extra)"
    )
    parser.add_argument("trajectories", metavar="TRAJ", help="a trajectory file (JSONL)")
    parser.add_argument(
        "--episode",
        type=integer(0),
        default=0,
        help="which episode of the file, from 0 (the number `llmgym view` shows for this file "
        "alone)",
    )
    parser.add_argument("-o", "--output", required=True, help="the GIF file to write")
    parser.add_argument(
        "--scale",
        type=integer(1, MAX_SCALE),
        default=4,
        help="enlarge recorded frames this many times",
    )
    parser.add_argument(
        "--frame-ms",
        type=integer(20),
        metavar="MS",
        help=f"milliseconds per frame (default: {PICTURE_FRAME_MS} for recorded frames, "
        f"{TEXT_FRAME_MS} for the pages of a text episode: its observations and actions)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    frames = write_gif(
        args.trajectories, args.episode, args.output, scale=args.scale, frame_ms=args.frame_ms
    )
    print(f"wrote {args.output} ({frames} frames)")
    return 0
