"""``python -m llmgym.cli``: the ``llmgym`` command."""

import sys

from llmgym.cli import main

sys.exit(main())
