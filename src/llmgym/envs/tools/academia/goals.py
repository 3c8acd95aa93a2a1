"""The academia service's goals: 9 templates (16 kinds of question) about the papers and
authors of the task's split, from one attribute to multi-hop questions."""

from __future__ import annotations

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import (
    Answer,
    AnswerKind,
    Episode,
    Goals,
    Results,
    ToolCall,
    call,
    goal_template,
)
from llmgym.envs.tools.academia.graph import (
    Paper,
    author_set,
    authors_with_few_collaborators,
    papers_with_few_references,
    split_authors,
    split_papers,
)

__all__ = ["AcademiaGoals"]


_PAPER_FACTS: tuple[tuple[str, str, AnswerKind], ...] = (
    ("In which year was the paper {} published?", "year", "number"),
    ("At which venue was the paper {} published?", "venue", "text"),
    ("Who are the authors of the paper {}?", "authors", "list"),
    ("How many citations does the paper {} have?", "n_citation", "number"),
    ("What are the keywords of the paper {}?", "keywords", "list"),
)
"""Questions about a paper's attributes: the question, the field of paperNodeCheck (a
:class:`Paper` attribute) that answers it, and how answers are compared."""


class AcademiaGoals(Goals[set[str]]):
    """Questions about papers, authors, citations and collaborations."""

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
        paper = rng.choice(split_papers(split))
        question, field, kind = rng.choice(_PAPER_FACTS)
        value = getattr(paper, field)
        truth = tuple(a.name for a in value) if field == "authors" else value
        plan = [call("loadPaperNet"), self._check(paper)]
        answer = Answer(truth, kind)
        return Episode.question(question.format(paper.title), plan, answer, lambda r: r[1][field])

    @goal_template(level=1)
    def _goal_organisation(self, rng: TaskRng, split: str) -> Episode:
        author = rng.choice(split_authors(split))
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
        paper = rng.choice(split_papers(split))
        goal = f"How many papers does the paper {paper.title} cite?"
        return self._count_neighbours(goal, "PaperNet", paper.title, len(paper.references))

    @goal_template(level=2)
    def _goal_collaborator_count(self, rng: TaskRng, split: str) -> Episode:
        author = rng.choice(split_authors(split))
        goal = f"How many collaborators does {author.name} have?"
        return self._count_neighbours(goal, "AuthorNet", author.name, len(author.collaborators))

    @goal_template(level=2, weight=1.5)
    def _goal_joint_papers(self, rng: TaskRng, split: str) -> Episode | None:
        pool = split_authors(split)
        first = rng.choice(pool)
        partners = [a for a in first.collaborators if a in author_set(split)]
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
        paper = rng.choice(split_papers(split))
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
        paper = rng.choice(papers_with_few_references(split))
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
        author = rng.choice(authors_with_few_collaborators(split))
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
        paper = rng.choice(papers_with_few_references(split))
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
