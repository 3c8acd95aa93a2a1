"""Academia: answer questions about papers, authors, venues and citations by walking two graphs
(PaperNet of citations, AuthorNet of collaborations), as in AgentGym's academia tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from llmgym.core import Task
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import ToolConfig, ToolEnv, prompt_texts
from llmgym.envs.tools.academia.goals import AcademiaGoals
from llmgym.envs.tools.academia.graph import split_authors, split_papers
from llmgym.envs.tools.academia.toolkit import GraphTools

__all__ = ["AcademiaConfig", "AcademiaEnv"]


@dataclass(frozen=True)
class AcademiaConfig(ToolConfig):
    """Difficulty knobs of :class:`AcademiaEnv`."""


class AcademiaEnv(ToolEnv[AcademiaConfig, set[str]]):
    """Answer questions about papers and authors by exploring a citation and a collaboration graph.

    ## Description
    AgentGym's Academia environment (built on DBLP) rebuilt offline with a scholarly graph generated
    from a fixed seed: 2,500 papers (2000-2023, 25 venues, keywords, document types) by about 1,400
    authors at 90 organisations. PaperNet links a paper to the papers it cites (citation counts are
    in-graph); AuthorNet links authors who wrote a paper together. The tools are AgentGym's: load a
    graph, list a node's neighbours, read a paper's or an author's attributes, read the papers on a
    collaboration edge. Goals come from 9 templates (16 kinds of question) at three levels: one
    attribute ("In which year was ... published?"), a neighbourhood ("How many papers does ...
    cite?", "Have A and B written a paper together?") and multi-hop questions ("Which organisation
    is the first author of ... affiliated with?", "Which paper cited by ... has the most
    citations?"). Eval goals are about papers and authors no train goal mentions.

    ## Action Space
    Text: one tool call per turn, ``Action: TOOL with Action Input: {JSON}`` or a JSON function
    call. Tools: ``loadPaperNet()``, ``loadAuthorNet()``, ``neighbourCheck(graph, node)``,
    ``paperNodeCheck(node)``, ``authorNodeCheck(node)``, ``authorEdgeCheck(node1, node2)``,
    ``check_valid_actions()`` and ``finish(answer)``. Nodes are named by paper title or author
    name (case and punctuation are ignored). A graph must be loaded before its nodes are read.
    Malformed calls, unknown tools or nodes, and missing, unknown or mistyped arguments get
    precise feedback, set ``info["invalid_action"]`` and change nothing.

    ## Observation Space
    Text. On reset: ``Goal: ...`` and the tool signatures. After a call: its JSON result, or the
    error.

    With ``prompt_style="agentgym"`` the reset and step texts are worded as AgentGym's tool
    servers word them (``Now new trial starts. ...``, ``Observation: ...`` then ``Give me one
    action.``); docs/tool-environments.md gives them exactly.

    ## Rewards
    ``1.0`` when ``finish`` gets the true answer, else ``0.0``. Numbers match within max(0.01, 1%
    of the true value); titles, names and yes/no ignoring case and punctuation; lists (authors,
    keywords, papers) in any order.

    With ``reward="progress"`` the rewards pay out AgentGym's progress rate (subgoals met by any
    tool result, as defined in docs/tool-environments.md; ``info["progress"]`` holds the rate);
    here the rate is reported as it is, as AgentGym's Academia server does.

    ## Starting State
    No graph loaded; the goal is drawn from the split's papers and authors.

    ## Episode End
    Terminates when ``finish`` is called (``info["success"]``, ``info["expected_answer"]``).
    Truncated by the registered turn limit (12 turns, as in AgentGym).

    ## Arguments
    ``gymnasium.make("llmgym/Academia-v0", min_level=1, max_level=3, action_format="any")``; see
    :class:`AcademiaConfig`. ``reward``: ``"finish"`` or
    ``"progress"``; ``prompt_style``: ``"llmgym"`` or ``"agentgym"``.

    ## Version History
    * v0: Initial version; the ``reward`` and ``prompt_style`` options (AgentGym's variant)
      were added later, their defaults keep the original play.
    """

    config_class = AcademiaConfig
    env_name = "academia"
    service, notes, example = prompt_texts("academia")
    toolkits = (GraphTools,)
    goals = AcademiaGoals

    def _setup(self, task: Task[AcademiaConfig], rng: TaskRng) -> set[str]:
        """No graph is loaded yet."""
        return set()

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        return _random_arguments().get(param)


@cache
def _random_arguments() -> dict[str, list[str]]:
    papers = [p.title for p in split_papers("train")[:200]]
    authors = [a.name for a in split_authors("train")[:200]]
    return {"node": papers + authors, "node1": authors, "node2": authors}
