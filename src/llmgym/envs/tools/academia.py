"""Academia: answer questions about papers, authors, venues and citations by walking two graphs
(PaperNet of citations, AuthorNet of collaborations), as in AgentGym's academia tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, TypeVar

from llmgym.core import Task
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.base import (
    Answer,
    AnswerKind,
    Episode,
    ItemSplit,
    Results,
    ToolCall,
    ToolConfig,
    ToolEnv,
    call,
    goal_template,
    load_data,
    normalize_answer,
    prompt_texts,
    tool,
)
from llmgym.errors import ToolError

__all__ = ["AcademiaConfig", "AcademiaEnv", "Author", "Paper", "ScholarGraph", "scholar_graph"]

PAPERS = 2500
AUTHORS = 1400
ORGANISATIONS = 90
MAX_CHECKS = 6
"""Goals that need one lookup per neighbour only use nodes with at most this many neighbours."""


@dataclass(eq=False)
class Author:
    """A node of AuthorNet."""

    name: str
    org: str
    topic: int
    papers: list[Paper] = field(default_factory=list)
    collaborators: dict[Author, list[Paper]] = field(default_factory=dict)


@dataclass(eq=False)
class Paper:
    """A node of PaperNet."""

    title: str
    year: int
    venue: str
    doc_type: str
    keywords: tuple[str, ...]
    authors: tuple[Author, ...]
    topic: int
    references: list[Paper] = field(default_factory=list)
    cited_by: list[Paper] = field(default_factory=list)

    @property
    def n_citation(self) -> int:
        return len(self.cited_by)


@dataclass
class ScholarGraph:
    """The generated papers and authors, indexed by normalised title and name."""

    papers: dict[str, Paper]
    authors: dict[str, Author]


@cache
def scholar_graph() -> ScholarGraph:
    """The citation and collaboration graph: 2,500 papers (2000-2023) at 25 venues by about 1,400
    authors of 90 organisations, generated once from a fixed seed."""
    words = load_data("academia")
    names = load_data("names")
    city_names = sorted({row[0] for row in load_data("cities")["cities"]})
    rng = TaskRng("scholar-graph", 1)
    topics = len(words["tasks"])

    organisations: list[str] = []
    while len(organisations) < ORGANISATIONS:
        org = rng.choice(words["org_patterns"]).format(city=rng.choice(city_names))
        if org not in organisations:
            organisations.append(org)
    taken: set[str] = set()
    authors: list[Author] = []
    while len(authors) < AUTHORS:
        name = f"{rng.choice(names['first_names'])} {rng.choice(names['last_names'])}"
        if name.lower() in taken:
            continue
        taken.add(name.lower())
        authors.append(Author(name, rng.choice(organisations), rng.randbelow(topics)))
    by_topic: dict[int, list[Author]] = {}
    by_org: dict[str, list[Author]] = {}
    for author in authors:
        by_topic.setdefault(author.topic, []).append(author)
        by_org.setdefault(author.org, []).append(author)

    titles: set[str] = set()
    papers: list[Paper] = []
    by_paper_topic: dict[int, list[Paper]] = {}
    years = sorted(rng.randint(2000, 2023) for _ in range(PAPERS))
    earlier = 0  # papers[:earlier] are from earlier years
    for year in years:
        while earlier < len(papers) and papers[earlier].year < year:
            earlier += 1
        lead = rng.choice(authors)
        team = [lead]
        for _ in range(rng.randint(0, 4)):
            draw = rng.random()
            pool = (
                by_org[lead.org] if draw < 0.35 else by_topic[lead.topic] if draw < 0.8 else authors
            )
            member = rng.choice(pool)
            if member not in team:
                team.append(member)
        topic = lead.topic
        venue, doc_type = rng.choice(words["venues"])
        paper = Paper(
            title=_new_title(rng, words, topic, titles),
            year=year,
            venue=venue,
            doc_type=doc_type,
            keywords=tuple(rng.sample(words["keywords"], rng.randint(2, 4))),
            authors=tuple(team),
            topic=topic,
        )
        if earlier:
            topical = by_paper_topic.get(topic, [])
            _cite(rng, paper, papers, earlier, [p for p in topical[-60:] if p.year < year])
        papers.append(paper)
        by_paper_topic.setdefault(topic, []).append(paper)
        for author in team:
            author.papers.append(paper)
            for other in team:
                if other is not author:
                    author.collaborators.setdefault(other, []).append(paper)
    return ScholarGraph(
        papers={normalize_answer(p.title): p for p in papers},
        authors={normalize_answer(a.name): a for a in authors if a.papers},
    )


def _new_title(rng: TaskRng, words: dict, topic: int, taken: set[str]) -> str:
    while True:
        method, method2 = rng.sample(words["methods"], 2)
        title = rng.choice(words["title_patterns"]).format(
            method=method,
            method2=method2,
            task=words["tasks"][topic],
            adj=rng.choice(words["adjectives"]),
            property=rng.choice(words["properties"]),
            thing=rng.choice(words["things"]),
        )
        if title.lower() not in taken:
            taken.add(title.lower())
            return title


def _cite(
    rng: TaskRng, paper: Paper, papers: list[Paper], earlier: int, same_topic: list[Paper]
) -> None:
    """Add 1-10 references to the ``earlier`` first papers (those of earlier years): mostly
    recent ones of the same topic, otherwise a uniform pick or a reference of a uniform pick
    (which favours well-cited papers)."""
    wanted = min(rng.randint(1, 10), earlier)
    chosen: list[Paper] = []
    for _ in range(wanted * 3):
        if len(chosen) == wanted:
            break
        draw = rng.random()
        if same_topic and draw < 0.5:
            pick = rng.choice(same_topic)
        else:
            pick = papers[rng.randbelow(earlier)]
            if draw > 0.75 and pick.references:
                pick = rng.choice(pick.references)
        if pick not in chosen:
            chosen.append(pick)
    for reference in chosen:
        paper.references.append(reference)
        reference.cited_by.append(paper)


_split_papers = ItemSplit("paper", lambda: scholar_graph().papers.values(), lambda p: p.title)
_split_authors = ItemSplit("author", lambda: scholar_graph().authors.values(), lambda a: a.name)


@cache
def _author_set(split: str) -> frozenset[Author]:
    return frozenset(_split_authors(split))


@cache
def _papers_with_few_references(split: str) -> tuple[Paper, ...]:
    return tuple(p for p in _split_papers(split) if 2 <= len(p.references) <= MAX_CHECKS)


@cache
def _authors_with_few_collaborators(split: str) -> tuple[Author, ...]:
    return tuple(a for a in _split_authors(split) if 1 <= len(a.collaborators) <= MAX_CHECKS)


_Node = TypeVar("_Node", Paper, Author)

_PAPER_FACTS: tuple[tuple[str, str, AnswerKind], ...] = (
    ("In which year was the paper {} published?", "year", "number"),
    ("At which venue was the paper {} published?", "venue", "text"),
    ("Who are the authors of the paper {}?", "authors", "list"),
    ("How many citations does the paper {} have?", "n_citation", "number"),
    ("What are the keywords of the paper {}?", "keywords", "list"),
)
"""Questions about a paper's attributes: the question, the field of paperNodeCheck (a
:class:`Paper` attribute) that answers it, and how answers are compared."""


@dataclass(frozen=True)
class AcademiaConfig(ToolConfig):
    """Difficulty knobs of :class:`AcademiaEnv`."""


class AcademiaEnv(ToolEnv[AcademiaConfig]):
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

    _loaded: set[str]
    """The graphs loaded in this episode."""

    @property
    def graph(self) -> ScholarGraph:
        """The scholarly graph (the same for every task)."""
        return scholar_graph()

    def _setup(self, task: Task[AcademiaConfig], rng: TaskRng) -> None:
        self._loaded = set()

    def _paper(self, node: str) -> Paper:
        titled = f"no paper titled {node.strip()[:80]!r}"
        return self._node("PaperNet", self.graph.papers, node, titled)

    def _author(self, node: str) -> Author:
        named = f"no author named {node.strip()[:60]!r}"
        return self._node("AuthorNet", self.graph.authors, node, named)

    def _node(self, graph: str, nodes: Mapping[str, _Node], node: str, missing: str) -> _Node:
        """The node of ``graph`` named ``node`` (case and punctuation aside); :class:`ToolError`
        when the graph is not loaded or has ``missing``."""
        self._require(graph)
        found = nodes.get(normalize_answer(node))
        if found is None:
            raise ToolError(f"{graph} has {missing}")
        return found

    def _require(self, graph: str) -> None:
        if graph not in self._loaded:
            raise ToolError(f"{graph} is not loaded; call load{graph} first")

    def _load(self, graph: str) -> str:
        self._loaded.add(graph)
        return f"{graph} is loaded."

    # ------------------------------------------------------------------ tools
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

    # ------------------------------------------------------------------ goals
    @staticmethod
    def _check(paper: Paper) -> ToolCall:
        return call("paperNodeCheck", node=paper.title)

    @staticmethod
    def _neighbours(graph: str, node: str) -> list[ToolCall]:
        """Load ``graph`` and list the neighbours of ``node``."""
        return [call(f"load{graph}"), call("neighbourCheck", graph=graph, node=node)]

    def _count_neighbours(self, goal: str, graph: str, node: str, count: int) -> Episode:
        """A question answered by counting the neighbours of ``node`` in ``graph``."""
        plan = self._neighbours(graph, node)
        answer = Answer(count, "number")
        return Episode.question(goal, plan, answer, lambda r: len(r[1]["neighbors"]))

    @goal_template(level=1, weight=2)
    def _goal_paper_attribute(self, rng: TaskRng, split: str) -> Episode:
        paper = rng.choice(_split_papers(split))
        question, field, kind = rng.choice(_PAPER_FACTS)
        value = getattr(paper, field)
        truth = tuple(a.name for a in value) if field == "authors" else value
        plan = [call("loadPaperNet"), self._check(paper)]
        answer = Answer(truth, kind)
        return Episode.question(question.format(paper.title), plan, answer, lambda r: r[1][field])

    @goal_template(level=1)
    def _goal_organisation(self, rng: TaskRng, split: str) -> Episode:
        author = rng.choice(_split_authors(split))
        goal = rng.choice(
            [
                f"Which organization is {author.name} affiliated with?",
                f"Where does {author.name} work?",
            ]
        )
        plan = [call("loadAuthorNet"), call("authorNodeCheck", node=author.name)]
        return Episode.question(goal, plan, Answer(author.org, "text"), lambda r: r[1]["org"])

    @goal_template(level=2)
    def _goal_reference_count(self, rng: TaskRng, split: str) -> Episode:
        paper = rng.choice(_split_papers(split))
        goal = f"How many papers does the paper {paper.title} cite?"
        return self._count_neighbours(goal, "PaperNet", paper.title, len(paper.references))

    @goal_template(level=2)
    def _goal_collaborator_count(self, rng: TaskRng, split: str) -> Episode:
        author = rng.choice(_split_authors(split))
        goal = f"How many collaborators does {author.name} have?"
        return self._count_neighbours(goal, "AuthorNet", author.name, len(author.collaborators))

    @goal_template(level=2, weight=1.5)
    def _goal_joint_papers(self, rng: TaskRng, split: str) -> Episode | None:
        pool = _split_authors(split)
        first = rng.choice(pool)
        partners = [a for a in first.collaborators if a in _author_set(split)]
        together = rng.random() < 0.6
        if together:
            if not partners:
                return None
            second = rng.choice(partners)
        else:
            second = rng.choice(pool)
            if second is first or second in first.collaborators:
                return None
        papers = tuple(p.title for p in first.collaborators.get(second, []))
        kind = rng.randbelow(3) if together else 0
        plan = [
            call("loadAuthorNet"),
            call("authorEdgeCheck", node1=first.name, node2=second.name),
        ]
        pair = f"{first.name} and {second.name}"
        if kind == 0:
            goal = f"Have {pair} written a paper together? Answer yes or no."
            answer = Answer("yes" if papers else "no", "text")
            return Episode.question(goal, plan, answer, lambda r: "yes" if r[1]["papers"] else "no")
        if kind == 1:
            goal = f"How many papers have {pair} written together?"
            answer = Answer(len(papers), "number")
            return Episode.question(goal, plan, answer, lambda r: len(r[1]["papers"]))
        goal = f"Which papers have {pair} written together?"
        return Episode.question(goal, plan, Answer(papers, "list"), lambda r: r[1]["papers"])

    @goal_template(level=3)
    def _goal_first_author_org(self, rng: TaskRng, split: str) -> Episode:
        paper = rng.choice(_split_papers(split))
        lead = paper.authors[0]
        goal = f"Which organization is the first author of the paper {paper.title} affiliated with?"
        plan = [
            call("loadPaperNet"),
            self._check(paper),
            call("loadAuthorNet"),
            call("authorNodeCheck", node=lead.name),
        ]
        return Episode.question(goal, plan, Answer(lead.org, "text"), lambda r: r[3]["org"])

    @goal_template(level=3, weight=1.5)
    def _goal_reference_extreme(self, rng: TaskRng, split: str) -> Episode | None:
        paper = rng.choice(_papers_with_few_references(split))
        refs = paper.references
        most_cited = rng.random() < 0.5
        if most_cited:
            values = [r.n_citation for r in refs]
            goal = f"Which of the papers cited by {paper.title} has the most citations?"
        else:
            values = [-r.year for r in refs]
            goal = f"Which of the papers cited by {paper.title} is the oldest?"
        best = max(values)
        if values.count(best) > 1:
            return None
        plan = [*self._neighbours("PaperNet", paper.title), *(self._check(r) for r in refs)]

        def extreme(results: Results) -> str:
            checked = results[2:]
            scores = [p["n_citation"] if most_cited else -p["year"] for p in checked]
            return str(checked[scores.index(max(scores))]["title"])

        return Episode.question(goal, plan, Answer(refs[values.index(best)].title, "text"), extreme)

    @goal_template(level=3)
    def _goal_colleagues(self, rng: TaskRng, split: str) -> Episode:
        author = rng.choice(_authors_with_few_collaborators(split))
        same = sorted(c.name for c in author.collaborators if c.org == author.org)
        goal = (
            f"How many of {author.name}'s collaborators work at the same organization as "
            f"{author.name}?"
        )
        plan = [
            call("loadAuthorNet"),
            call("authorNodeCheck", node=author.name),
            call("neighbourCheck", graph="AuthorNet", node=author.name),
            *(call("authorNodeCheck", node=c.name) for c in author.collaborators),
        ]
        return Episode.question(
            goal,
            plan,
            Answer(len(same), "number"),
            lambda r: sum(c["org"] == r[1]["org"] for c in r[3:]),
        )

    @goal_template(level=3)
    def _goal_venue_of_references(self, rng: TaskRng, split: str) -> Episode:
        paper = rng.choice(_papers_with_few_references(split))
        venue = rng.choice(paper.references).venue
        count = sum(r.venue == venue for r in paper.references)
        goal = f"How many of the papers cited by {paper.title} were published at {venue}?"
        plan = [
            *self._neighbours("PaperNet", paper.title),
            *(self._check(r) for r in paper.references),
        ]
        return Episode.question(
            goal, plan, Answer(count, "number"), lambda r: sum(p["venue"] == venue for p in r[2:])
        )

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        return _random_arguments().get(param)


@cache
def _random_arguments() -> dict[str, list[str]]:
    papers = [p.title for p in _split_papers("train")[:200]]
    authors = [a.name for a in _split_authors("train")[:200]]
    return {"node": papers + authors, "node1": authors, "node2": authors}
