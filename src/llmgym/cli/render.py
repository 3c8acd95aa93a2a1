"""``llmgym render``: an episode of a trajectory file as an animated GIF."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "render", help="an episode of a trajectory file as an animated GIF ([report] extra)"
    )
    parser.add_argument("trajectories", metavar="TRAJ", help="a trajectory file (JSONL)")
    parser.add_argument(
        "--episode",
        type=int,
        default=0,
        help="which episode of the file, from 0 (the number `llmgym view` shows for this file "
        "alone)",
    )
    parser.add_argument("-o", "--output", required=True, help="the GIF file to write")
    parser.add_argument("--scale", type=int, default=4, help="enlarge frames this many times")
    parser.add_argument("--frame-ms", type=int, default=150, help="milliseconds per frame")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.viewer.render import write_gif

    frames = write_gif(
        args.trajectories, args.episode, args.output, scale=args.scale, frame_ms=args.frame_ms
    )
    print(f"wrote {args.output} ({frames} frames)")
    return 0
