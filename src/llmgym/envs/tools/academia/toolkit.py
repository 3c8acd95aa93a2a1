"""The academia service's tools, after AgentGym's: load a graph, list a node's neighbours, read
a paper's or an author's attributes and the papers on a collaboration edge. The episode's state
is the set of graphs loaded so far."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeVar

from llmgym.envs.tools import Toolkit, normalize_answer, tool
from llmgym.envs.tools.academia.graph import Author, Paper, scholar_graph
from llmgym.errors import ToolError

__all__ = ["GraphTools"]

_Node = TypeVar("_Node", Paper, Author)


class GraphTools(Toolkit[set[str]]):
    """The tools of PaperNet and AuthorNet; a graph must be loaded before its nodes are read."""

    @tool
    def loadPaperNet(self) -> str:
        """Load PaperNet: nodes are papers, edges are citations.

        Returns:
            A confirmation.
        """
        return self._load("PaperNet")

    @tool
    def loadAuthorNet(self) -> str:
        """Load AuthorNet: nodes are authors, edges are collaborations.

        Returns:
            A confirmation.
        """
        return self._load("AuthorNet")

    @tool
    def neighbourCheck(self, graph: Literal["PaperNet", "AuthorNet"], node: str) -> dict:
        """List the first-order neighbours of a node: in PaperNet the papers it cites, in AuthorNet
        the author's collaborators.

        Args:
            graph: The graph to look in.
            node: The paper title (PaperNet) or author name (AuthorNet).

        Returns:
            neighbors: an array of paper titles or author names.
        """
        if graph == "PaperNet":
            return {"neighbors": [p.title for p in self._paper(node).references]}
        return {"neighbors": [a.name for a in self._author(node).collaborators]}

    @tool
    def paperNodeCheck(self, node: str) -> dict:
        """Get the attributes of a paper in PaperNet.

        Args:
            node: The title of the paper.

        Returns:
            authors, year, venue, n_citation (citations within PaperNet), keywords and doc_type.
        """
        paper = self._paper(node)
        return {
            "title": paper.title,
            "authors": [a.name for a in paper.authors],
            "year": paper.year,
            "venue": paper.venue,
            "n_citation": paper.n_citation,
            "keywords": list(paper.keywords),
            "doc_type": paper.doc_type,
        }

    @tool
    def authorNodeCheck(self, node: str) -> dict:
        """Get the attributes of an author in AuthorNet.

        Args:
            node: The name of the author.

        Returns:
            name and org (the organisation).
        """
        author = self._author(node)
        return {"name": author.name, "org": author.org}

    @tool
    def authorEdgeCheck(self, node1: str, node2: str) -> dict:
        """Get the collaboration edge between two authors in AuthorNet.

        Args:
            node1: The first author's name.
            node2: The second author's name.

        Returns:
            papers: the titles the two authors wrote together (empty if none).
        """
        first, second = self._author(node1), self._author(node2)
        return {"papers": [p.title for p in first.collaborators.get(second, [])]}

    def _paper(self, node: str) -> Paper:
        titled = f"no paper titled {node.strip()[:80]!r}"
        return self._node("PaperNet", scholar_graph().papers, node, titled)

    def _author(self, node: str) -> Author:
        named = f"no author named {node.strip()[:60]!r}"
        return self._node("AuthorNet", scholar_graph().authors, node, named)

    def _node(self, graph: str, nodes: Mapping[str, _Node], node: str, missing: str) -> _Node:
        """The node of ``graph`` named ``node`` (case and punctuation aside); :class:`ToolError`
        when the graph is not loaded or has ``missing``."""
        self._require(graph)
        found = nodes.get(normalize_answer(node))
        if found is None:
            raise ToolError(f"{graph} has {missing}")
        return found

    def _require(self, graph: str) -> None:
        if graph not in self.state:
            raise ToolError(f"{graph} is not loaded; call load{graph} first")

    def _load(self, graph: str) -> str:
        self.state.add(graph)
        return f"{graph} is loaded."
