"""``python -m llmgym``: the ``llmgym`` command, for environments without its script on PATH."""

import sys

from llmgym.cli import main

sys.exit(main())
