"""The scholarly graph of the academia service: 2,500 papers (2000-2023) at 25 venues by about
1,400 authors of 90 organisations, generated once from a fixed seed. PaperNet links a paper to
the papers it cites; AuthorNet links authors who wrote a paper together."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import ItemSplit, load_data, normalize_answer

__all__ = [
    "MAX_CHECKS",
    "Author",
    "Paper",
    "ScholarGraph",
    "author_set",
    "authors_with_few_collaborators",
    "papers_with_few_references",
    "scholar_graph",
    "split_authors",
    "split_papers",
]

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


split_papers = ItemSplit("paper", lambda: scholar_graph().papers.values(), lambda p: p.title)
"""The papers of each split: goals of one split only ask about its papers."""
split_authors = ItemSplit("author", lambda: scholar_graph().authors.values(), lambda a: a.name)
"""The authors of each split."""


@cache
def author_set(split: str) -> frozenset[Author]:
    """The authors of ``split``, as a set."""
    return frozenset(split_authors(split))


@cache
def papers_with_few_references(split: str) -> tuple[Paper, ...]:
    """The papers of ``split`` with 2 to :data:`MAX_CHECKS` references."""
    return tuple(p for p in split_papers(split) if 2 <= len(p.references) <= MAX_CHECKS)


@cache
def authors_with_few_collaborators(split: str) -> tuple[Author, ...]:
    """The authors of ``split`` with 1 to :data:`MAX_CHECKS` collaborators."""
    return tuple(a for a in split_authors(split) if 1 <= len(a.collaborators) <= MAX_CHECKS)
