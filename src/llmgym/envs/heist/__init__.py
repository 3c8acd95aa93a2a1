"""Heist: procgen's key-and-door maze, as text (``Heist-v0``), as pixels from llmgym's own renderer
(``HeistPixels-v0``), and procgen's own game behind the gymnasium API (``ProcgenHeist-v0``)."""
