"""Sheet: edit a spreadsheet with the tools of a simulated spreadsheet service (cells, ranges,
rows, columns, sorting and formulas, as in AgentGym's Google-Sheets tools); success is judged on
the final state of the workbook.

* :mod:`~llmgym.envs.tools.sheet.cells` — cells, A1 positions and formulas;
* :mod:`~llmgym.envs.tools.sheet.workbook` — the episode's workbook and its generated sheets;
* :mod:`~llmgym.envs.tools.sheet.toolkit` — the service's tools;
* :mod:`~llmgym.envs.tools.sheet.goals` — the goal templates;
* :mod:`~llmgym.envs.tools.sheet.env` — :class:`SheetEnv`.
"""

from llmgym.envs.tools.sheet.cells import (
    MAX_FORMULA_WORK,
    FormulaBudget,
    cell_fraction,
    column_letters,
    evaluate_formula,
    parse_position,
)
from llmgym.envs.tools.sheet.env import SheetConfig, SheetEnv

__all__ = [
    "MAX_FORMULA_WORK",
    "FormulaBudget",
    "SheetConfig",
    "SheetEnv",
    "cell_fraction",
    "column_letters",
    "evaluate_formula",
    "parse_position",
]
