"""Academia: the generated citation and collaboration graphs and the graph tools."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from llmgym.envs.tools.academia import AcademiaEnv, scholar_graph
from llmgym.envs.tools.academia.graph import split_authors, split_papers


@pytest.fixture
def env() -> AcademiaEnv:
    env = gym.make("llmgym/Academia-v0").unwrapped
    env.reset(seed=0)
    return env


def act(env: AcademiaEnv, tool_name: str, /, **arguments) -> tuple[object, bool]:
    observation, _, _, _, info = env.step(
        f"Action: {tool_name} with Action Input: {json.dumps(arguments)}"
    )
    try:
        return json.loads(observation), info["invalid_action"]
    except json.JSONDecodeError:
        return observation, info["invalid_action"]


def test_graphs_are_consistent() -> None:
    graph = scholar_graph()
    assert len(graph.papers) == 2500 and len(graph.authors) > 1000
    for paper in graph.papers.values():
        assert all(reference.year < paper.year for reference in paper.references)
        assert all(paper in reference.cited_by for reference in paper.references)
        assert 1 <= len(paper.authors) <= 5
        for author in paper.authors:
            assert paper in author.papers
    for author in graph.authors.values():
        for other, papers in author.collaborators.items():
            assert author.collaborators[other] == papers == other.collaborators[author]
            assert all(author in p.authors and other in p.authors for p in papers)


def test_graph_is_pinned() -> None:
    paper = next(iter(scholar_graph().papers.values()))
    assert (paper.title, paper.year, paper.venue) == (
        "Learning Uncertainty with Federated Learning",
        2000,
        "ECCV",
    )
    assert paper.authors[0].name == "Maria Wang"


def test_graphs_must_be_loaded_first(env: AcademiaEnv) -> None:
    paper = split_papers("train")[0]
    result, invalid = act(env, "paperNodeCheck", node=paper.title)
    assert (
        invalid
        and result == "Error from paperNodeCheck: PaperNet is not loaded; call loadPaperNet first"
    )
    assert act(env, "loadPaperNet") == ("PaperNet is loaded.", False)
    result, invalid = act(env, "paperNodeCheck", node=paper.title.lower())
    assert not invalid
    assert result == {
        "title": paper.title,
        "authors": [a.name for a in paper.authors],
        "year": paper.year,
        "venue": paper.venue,
        "n_citation": len(paper.cited_by),
        "keywords": list(paper.keywords),
        "doc_type": paper.doc_type,
    }
    result, invalid = act(env, "authorNodeCheck", node=paper.authors[0].name)
    assert invalid and "AuthorNet is not loaded" in result


def test_neighbours_and_edges(env: AcademiaEnv) -> None:
    act(env, "loadPaperNet")
    act(env, "loadAuthorNet")
    paper = next(p for p in split_papers("train") if len(p.references) >= 3)
    result, _ = act(env, "neighbourCheck", graph="PaperNet", node=paper.title)
    assert result == {"neighbors": [r.title for r in paper.references]}
    author = next(a for a in split_authors("train") if a.collaborators)
    result, _ = act(env, "neighbourCheck", graph="authornet", node=author.name)
    assert sorted(result["neighbors"]) == sorted(a.name for a in author.collaborators)
    other, papers = next(iter(author.collaborators.items()))
    result, _ = act(env, "authorEdgeCheck", node1=other.name, node2=author.name)
    assert result == {"papers": [p.title for p in papers]}
    stranger = next(
        a for a in split_authors("train") if a not in author.collaborators and a is not author
    )
    assert act(env, "authorEdgeCheck", node1=author.name, node2=stranger.name) == (
        {"papers": []},
        False,
    )
    result, invalid = act(env, "neighbourCheck", graph="CitationNet", node=paper.title)
    assert invalid
    assert (
        'argument \'graph\' must be one of "PaperNet", "AuthorNet", got string "CitationNet"'
        in result
    )
    result, invalid = act(env, "paperNodeCheck", node="A Paper That Does Not Exist")
    assert invalid and "PaperNet has no paper titled" in result


def test_a_new_episode_unloads_the_graphs(env: AcademiaEnv) -> None:
    act(env, "loadPaperNet")
    env.reset(seed=1)
    _, invalid = act(env, "paperNodeCheck", node=split_papers("train")[0].title)
    assert invalid


def test_eval_goals_are_about_eval_papers_and_authors() -> None:
    env = gym.make("llmgym/Academia-v0").unwrapped
    eval_names = {p.title for p in split_papers("eval")} | {a.name for a in split_authors("eval")}
    for index in range(40):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        assert any(name in env.instruction for name in eval_names), env.instruction
