"""SearchQA: answer questions by searching an offline encyclopedia (Search-R1 style)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Protocol

import numpy as np

from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob
from llmgym.core.fulltext import Bm25Index, search_terms
from llmgym.envs.searchqa.corpus import Article, Encyclopedia
from llmgym.envs.searchqa.original import OriginalQuestion, Passages, load_questions
from llmgym.envs.searchqa.questions import (
    QUESTION_TYPES,
    TEMPLATES,
    Question,
    Template,
    exact_match,
    questions_for,
)
from llmgym.errors import ConfigError
from llmgym.originals import GENERATED, data_dir_knob, data_dir_of, source_knob

__all__ = ["SearchQAConfig", "SearchQAEnv", "parse_reply"]

MAX_REPLY_CHARACTERS = 20_000
MAX_QUERY_CHARACTERS = 300
MAX_ANSWER_CHARACTERS = 200
_TAG = re.compile(r"<(/?)(search|answer)>", re.IGNORECASE)

_CORRECTION = (
    "My previous action is invalid: {why} If I want to search, I should put the query between "
    "<search> and </search>. If I want to give the final answer, I should put the answer "
    "between <answer> and </answer>. Let me try again."
)


class SearchCorpus(Protocol):
    """What an episode searches: the generated encyclopedia or an original corpus."""

    size: int
    index: Bm25Index

    def search(self, query: str, k: int) -> list[Article]:
        """The ``k`` best articles or passages for ``query``."""
        ...

    def article(self, rowid: int) -> Article:
        """The article or passage at row ``rowid`` (from 1)."""
        ...


@dataclass(frozen=True)
class SearchQAConfig(EnvConfig):
    """Difficulty knobs of :class:`SearchQAEnv`."""

    question_types: str = knob(
        "all",
        choices=QUESTION_TYPES,
        doc="Questions asked: 'single-hop', 'bridge' (2-hop), 'comparison', 'multi-hop' (bridge "
        "and comparison) or 'all'.",
    )
    top_k: int = knob(
        3, low=1, high=10, doc="Passages a search returns (Search-R1 retrieves the top 3)."
    )
    max_turns: int = knob(
        10,
        low=1,
        high=100,
        doc="Valid turns (searches and the answer) before the episode is truncated; invalid "
        "replies do not count.",
    )
    corpus_seed: int = knob(
        0,
        low=0,
        high=1_000_000,
        doc="Seed of the generated encyclopedia (each seed builds its own index once).",
    )
    source: str = source_knob("search-r1")
    data_dir: str = data_dir_knob()
    data_source: str = knob(
        "",
        doc="Original data only: play only the questions of this dataset (their data_source: "
        "nq, triviaqa, popqa, hotpotqa, 2wikimultihopqa, musique, bamboogle...), numbered from "
        "0 within it, for a score per dataset as Search-R1 reports them; '' plays them all.",
    )

    def validate(self) -> None:
        data_dir = data_dir_of(self)
        if data_dir is None:
            if self.data_source:
                raise ConfigError(
                    f"{type(self).__name__}.data_source",
                    f"{self.data_source!r} selects a dataset of original data; with source "
                    "'generated' leave it ''",
                )
            return
        if self.data_source:
            questions = load_questions(data_dir)
            found = sorted({q.data_source for split in questions.values() for q in split})
            if self.data_source not in found:
                raise ConfigError(
                    f"{type(self).__name__}.data_source",
                    f"{self.data_source!r} is not a dataset of {data_dir}; it holds "
                    f"{', '.join(repr(name) for name in found)}",
                )
        for name, default in (("question_types", "all"), ("corpus_seed", 0)):
            if getattr(self, name) != default:
                raise ConfigError(
                    f"{type(self).__name__}.{name}",
                    f"{getattr(self, name)!r} applies to generated tasks only; with source "
                    f"{self.source!r} it must stay {default!r}",
                )


def parse_reply(reply: str) -> tuple[str, str] | str:
    """The action of a reply: ``("search", query)`` or ``("answer", text)``, stripped; or a
    sentence saying why the reply holds no single valid action."""
    if len(reply) > MAX_REPLY_CHARACTERS:
        return (
            f"the reply has {len(reply):,} characters, over the {MAX_REPLY_CHARACTERS:,} allowed."
        )
    actions, nested, unclosed = _actions(reply)
    if nested:
        return "an action holds another action; give exactly one per reply."
    if len(actions) > 1:
        return f"the reply holds {len(actions)} actions; give exactly one per reply."
    if unclosed:
        return "a <search> or <answer> tag is not closed."
    if not actions:
        return "the reply holds no <search> or <answer> action."
    tag, content = actions[0]
    if not content:
        return f"the <{tag}> is empty."
    limit = MAX_QUERY_CHARACTERS if tag == "search" else MAX_ANSWER_CHARACTERS
    if len(content) > limit:
        return f"the {tag} has {len(content):,} characters, over the {limit} allowed."
    return tag, content


def _actions(reply: str) -> tuple[list[tuple[str, str]], bool, bool]:
    """The ``(tag, stripped content)`` of each closed action of ``reply`` in one pass over its
    tags (linear in the reply, whatever it holds), whether an action holds another tag, and
    whether a tag is left open."""
    actions: list[tuple[str, str]] = []
    nested = False
    opened: re.Match[str] | None = None
    for tag in _TAG.finditer(reply):
        closing, name = tag.group(1) == "/", tag.group(2).lower()
        if opened is None:
            if not closing:
                opened = tag
        elif closing and name == opened.group(2).lower():
            actions.append((name, reply[opened.end() : tag.start()].strip()))
            opened = None
        else:
            nested = True
    return actions, nested, opened is not None


class SearchQAEnv(TextEnv[SearchQAConfig]):
    """Answer a question by searching an offline encyclopedia, as in Search-R1 and AgentGym.

    ## Description
    AgentGym's SearchQA family (Search-R1's retrieval QA over NQ, HotpotQA and others) rebuilt
    offline. The corpus is a generated encyclopedia of 5,840 short articles (40 countries, 400
    cities, 2,900 people, 140 universities, 560 companies, 900 films and 900 novels) whose facts
    link the entities: a city lies in a country, a person was born in a city and studied at a
    university, a company or university was founded by a person, a film was directed by a person,
    produced by a studio and set in a city. The same ``corpus_seed`` gives the same corpus on any
    machine; the names are invented, so no question can be answered from memory. Each article
    is a title and a few sentences: the entity's facts, its neighbours (a director's films, a
    city's notable natives) and some colour (a plot, a landmark). Searches run
    on a sqlite FTS5 index ranked by BM25 (title matches weigh 10 times more than text), built
    once per seed into the user cache folder.

    Questions are generated from the facts: single-hop (``Who directed the film The Pale
    Window?``), bridge or 2-hop (``In what year was the director of the film The Pale Window
    born?``: the film's article names the director, whose article gives the year) and
    comparison (``Who was born first, Sabine Falerham or Beatrix Yarafield?``). Entities are
    split by a hash of their name; eval questions name only eval entities (the task counts are
    in the table above).

    ## Action Space
    Text, Search-R1's tags. The agent may reason in ``<think>...</think>`` (ignored) and acts
    with exactly one of ``<search>query</search>`` or ``<answer>text</answer>`` per reply (tags
    in any case). A reply with no action, an unclosed tag, several or nested actions, an empty
    query or answer, a query over 300 or an answer over 200 characters, a reply over 20,000
    characters, or a query without a word to look up gets a correction message (Search-R1's "My
    previous action is invalid ...") with ``info["invalid_action"] = True`` and does not count
    as a turn. A query whose words occur in no article is a valid search that finds nothing.

    ## Observation Space
    Text. First the Search-R1 instruction with the question. After a search, the top
    ``top_k`` passages as ``<information>Doc 1(Title: ...) text\\nDoc 2(Title: ...) text
    </information>`` (``info["titles"]`` lists their titles); after the answer, whether it was
    right.

    ## Rewards
    ``1.0`` when the answer matches the gold answer or one of its aliases exactly after SQuAD's
    normalisation (lower case, punctuation and articles removed, whitespace collapsed), as in
    Search-R1's ``qa_em``; ``0.0`` otherwise.

    ## Starting State
    A question of the split; nothing searched yet.

    ## Episode End
    Terminates at the answer (``info["success"]`` when it is right). Truncated after
    ``max_turns`` valid turns without an answer, and by the registered limit of 20 replies
    (invalid ones included).

    ## Arguments
    ``gymnasium.make("llmgym/SearchQA-v0", question_types="all", top_k=3, max_turns=10,
    corpus_seed=0)``; see :class:`SearchQAConfig`. The oracle parses the question, searches each
    entity it needs by name and reads the facts off the returned passages (never the answer
    key); measured: see docs/environments/searchqa.md.

    ## Original data
    ``config={"source": "search-r1", "data_dir": DIR}`` plays Search-R1's own questions over
    its Wikipedia corpus (where to get them: docs/originals.md; ``llmgym data check search-r1
    DIR`` lists what it finds). ``DIR`` holds, as Search-R1 and AgentGym publish them:

    * the corpus ``wiki-18.jsonl`` (or ``wiki-18.jsonl.gz``, ``corpus.jsonl``,
      ``corpus.jsonl.gz``): one passage per line,
      ``{"id": "1", "contents": "\\"Title\\"\\ntext"}``;
    * the questions: Search-R1's ``test.parquet`` and ``train.parquet`` (``data_source``,
      ``prompt``, ``reward_model.ground_truth.target``), or else FlashRAG's
      ``<dataset>/test.jsonl``, ``dev.jsonl`` and ``train.jsonl`` (``{"id", "question",
      "golden_answers"}``).

    AgentGym's ``agentenv-searchqa`` folder, as its ``setup.sh`` leaves it, works as ``DIR``
    too (the corpus in ``retrieve_data/``, the parquet files in ``agentenv_searchqa/queries/``).

    ``test.parquet`` (a dataset's ``test.jsonl``, else its ``dev.jsonl``, as Search-R1's
    ``qa_search_test_merge.py`` picks them) is the ``eval`` split, ``train.parquet`` (the
    ``train.jsonl`` files) the ``train`` split; ``eval/00000`` is the split's first question in
    file order (FlashRAG folders in AgentGym's order: nq, triviaqa, popqa, hotpotqa,
    2wikimultihopqa, musique, bamboogle for eval, nq, hotpotqa for train, then any others by
    name). With AgentGym's data (its 51,713 test and 169,615 train questions) AgentGym's
    searchqa item ``i`` is ``eval/i`` below 51,713 and ``train/(i - 51,713)`` from there.
    Questions are asked as Search-R1 asks them (stripped, ending in ``?``), with the
    instruction above.

    The corpus is indexed once into the user cache folder: streamed line by line into a
    sqlite FTS5 index over each passage's ``contents``, ranked by BM25, with a progress bar;
    the index is named after the corpus file's path, size and modification time, so a changed
    file is indexed again. The time it takes, the index's size and a search's latency, per
    million passages and extrapolated to wiki-18's 21 million, are under Measured below. An
    unzipped corpus's passages are read back from the file; a gzipped one's are copied into
    the index.
    A search returns the top ``top_k`` passages as Search-R1 formats them, ``Doc 1(Title:
    "Title") text`` (the title line keeps its quotes).

    The reward is Search-R1's ``qa_em``: 1 when the answer equals one of ``golden_answers``
    after SQuAD's normalisation, else 0 (an answer that merely contains a golden answer
    scores 0). The episode ends at the answer, right or wrong (AgentGym's server lets a wrong
    answer be followed by another; Search-R1 scores a rollout's last answer). Retrieval
    differs from the originals: Search-R1 and AgentGym retrieve with E5 embeddings over a
    dense index (``e5_Flat.index``), Search-R1's BM25 option with Lucene (Pyserini); llmgym
    uses FTS5's BM25 over at most 6 selective words of a query, so the passages found differ.
    ``question_types`` and ``corpus_seed`` apply to generated tasks only. The oracle searches
    the question once, then answers with a golden answer read from the answer key (the
    original data has no other way to an answer).

    ## Version History
    * v0: Initial version.
    """

    config_class = SearchQAConfig
    env_name = "searchqa"
    example = (
        "Observation: ... Question: In what year was the director of the film The Pale Window "
        "born?\n"
        "Thought: I need the film's director first.\n"
        "Action: <search>The Pale Window</search>"
    )
    design_notes = (
        "The corpus is fixed per corpus_seed (5,840 articles); a new seed builds a new index "
        "once (about a second). A smaller top_k makes a search return fewer passages; "
        "max_turns bounds the searches before the answer."
    )
    skills = ("single-hop", "bridge", "comparison")
    skill_practice: ClassVar[dict[str, dict[str, Any]]] = {
        "single-hop": {"question_types": "single-hop"},
        "bridge": {"question_types": "bridge"},
        "comparison": {"question_types": "comparison"},
    }

    _question: Question | None = None
    _corpus: SearchCorpus | None = None
    _turns = 0
    _queries: list[str]
    _shown: list[Article]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle and copy without the encyclopedia (shared, read-only, its connections cannot
        be pickled); a copy reopens it."""
        state = super().__getstate__()
        state.pop("_corpus", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._task is not None:
            self._corpus = _open_corpus(self.task.config)

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: SearchQAConfig | None = None) -> TaskIdRange:
        config = config or self.config
        return TaskIdRange(split, len(_questions(config, split)))

    def instance_key(self) -> str:
        return self.after_reset(self._question).text

    def reveal(self) -> str:
        """The gold answer (``llmgym play`` shows it to a player who quits)."""
        return self.after_reset(self._question).answer

    def rules(self) -> str:
        return _instruction("")

    def skills_achieved(self) -> frozenset[str]:
        """The question's type (single-hop, bridge, comparison) once it is answered right
        (none for an original question)."""
        if not self._success:
            return frozenset()
        return frozenset({self.question.type}) & frozenset(self.skills)

    @property
    def question(self) -> Question:
        """The question of this episode and its answer key."""
        return self.after_reset(self._question)

    @property
    def corpus(self) -> SearchCorpus:
        """The encyclopedia (or the original corpus) of this episode."""
        return self.after_reset(self._corpus)

    def _reset_task(self, task: Task[SearchQAConfig]) -> tuple[str, str]:
        config = task.config
        self._corpus = _open_corpus(config)
        self._question = _as_question(_questions(config, task.split)[task.index])
        self._turns = 0
        self._queries = []
        self._shown = []
        return _instruction(self._question.text), self._question.text

    # ------------------------------------------------------------------ rules
    def _step(self, action: str) -> Transition:
        parsed = parse_reply(action)
        if isinstance(parsed, str):
            return self.invalid(_CORRECTION.format(why=parsed[0].upper() + parsed[1:]))
        tag, content = parsed
        config = self.task.config
        if tag == "answer":
            self._turns += 1
            right = exact_match(content, self.question.answers)
            verdict = "correct" if right else "not correct"
            return Transition(
                f"Your answer {self.quote(content)} is {verdict}.",
                reward=1.0 if right else 0.0,
                terminated=True,
                success=right,
            )
        if not search_terms(content, self.corpus.index.stopwords):
            return self.invalid(
                _CORRECTION.format(
                    why=f"The query {self.quote(content)} has no word to look up (only stop "
                    "words or punctuation)."
                )
            )
        self._turns += 1
        articles = self.corpus.search(content, config.top_k)
        self._queries.append(content)
        self._shown.extend(articles)
        if articles:
            passages = "\n".join(
                f"Doc {rank}(Title: {article.title}) {article.text}"
                for rank, article in enumerate(articles, start=1)
            )
        else:
            passages = "No passage matches the query."
        observation = f"<information>{passages}</information>"
        info = {"titles": [article.title for article in articles]}
        if self._turns >= config.max_turns:
            return Transition(
                f"{observation}\nTurn limit reached ({config.max_turns} turns) without an answer.",
                truncated=True,
                info=info,
            )
        return Transition(observation, info=info)

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> str:
        """Parse the question against the question forms, then, for each entity it needs (the
        named one, then the one a fact points to), search its name and read the fact off the
        returned passage titled with that name; answer once every fact is read. It reads only
        the question and the passages the searches returned, never the answer key.

        On original data it searches the question once, then answers with a golden answer
        read from the answer key (the original data has no other way to the answer)."""
        if self.task.config.source != GENERATED:
            return self._original_oracle_action()
        parsed = _parse_question(self.question.text)
        if parsed is None:
            return "<answer>unknown</answer>"
        template, names = parsed
        if template.type == "comparison":
            values = []
            for name in names:
                value = self._read(name, template.hops[0])
                if value is None:
                    return self._search_for(name, template.kind)
                values.append(int(value))
            return f"<answer>{names[0] if values[0] < values[1] else names[1]}</answer>"
        entity, kind = names[0], template.kind
        for relation in template.hops:
            value = self._read(entity, relation)
            if value is None:
                return self._search_for(entity, kind)
            entity, kind = value, _KIND_OF.get(relation, "")
        return f"<answer>{entity}</answer>"

    def _original_oracle_action(self) -> str:
        question = self.question
        searchable = len(question.text) <= MAX_QUERY_CHARACTERS and search_terms(
            question.text, self.corpus.index.stopwords
        )
        if searchable and not self._queries:
            return f"<search>{question.text}</search>"
        fits = [a for a in question.answers if 0 < len(a.strip()) <= MAX_ANSWER_CHARACTERS]
        return f"<answer>{(fits or [question.answer])[0]}</answer>"

    def _read(self, title: str, relation: str) -> str | None:
        """The ``relation`` fact of the article titled ``title`` among the passages shown so far."""
        for article in self._shown:
            if article.title == title:
                found = _FACT_PATTERNS[relation].search(article.text)
                if found:
                    return found.group(1)
        return None

    def _search_for(self, name: str, kind: str) -> str:
        """A query for the article of ``name``, a ``kind``: the name, then the name with a word
        of its kind (a surname can share its stem with a city: ``Veliston``, ``Velistone``)."""
        queries = (name, f"{name} {_KIND_WORDS[kind]}")
        for query in queries:
            if query not in self._queries:
                return f"<search>{query}</search>"
        return "<answer>unknown</answer>"

    def sample_action(self, rng: np.random.Generator) -> str:
        """A search for a random article's title or an answer naming a random article."""
        corpus = self.corpus
        title = corpus.article(int(rng.integers(1, corpus.size + 1))).title
        tag = "search" if rng.random() < 0.6 else "answer"
        return f"<{tag}>{title}</{tag}>"


def _questions(config: SearchQAConfig, split: str) -> Sequence[Question | OriginalQuestion]:
    """The questions of ``split``: generated, or read from the config's original data."""
    data_dir = data_dir_of(config)
    if data_dir is None:
        return questions_for(config.corpus_seed, split, config.question_types)
    return load_questions(data_dir, config.data_source).get(split, ())


def _as_question(question: Question | OriginalQuestion) -> Question:
    """An original question as the environment asks it (its dataset as its type)."""
    if isinstance(question, Question):
        return question
    answer, *aliases = question.golden_answers
    return Question(question.text, answer, tuple(aliases), question.data_source, ())


def _open_corpus(config: SearchQAConfig) -> SearchCorpus:
    data_dir = data_dir_of(config)
    if data_dir is None:
        return Encyclopedia.open(config.corpus_seed)
    return Passages.open(data_dir)


def _instruction(question: str) -> str:
    """Search-R1's instruction (as AgentGym's SearchQA uses it), with the question."""
    return (
        "Answer the given question. You must conduct reasoning inside <think> and </think> "
        "first every time you get new information. After reasoning, if you find you lack some "
        "knowledge, you can call a search engine by <search> query </search> and it will return "
        "the top searched results between <information> and </information>. You can search as "
        "many times as you want. If you find no further external knowledge needed, you can "
        "directly provide the answer inside <answer> and </answer>, without detailed "
        f"illustrations. For example, <answer> Beijing </answer>. Question: {question}"
    ).rstrip()


_FACT_PATTERNS: dict[str, re.Pattern[str]] = {
    relation: re.compile(pattern)
    for relation, pattern in {
        "birthplace": r"Born in ([^,]+), ",
        "born": r"\(born (\d{4})\)",
        "alma_mater": r"studied at ([^.]+)\.",
        "director": r"film directed by (.+?) and produced by ",
        "studio": r"produced by ([^.]+)\.",
        "setting": r"is set in ([^.]+)\.",
        "year": r" is an? (\d{4}) ",
        "author": r" novel by (.+?), published by ",
        "publisher": r"published by ([^.]+)\.",
        "founder": r"founded in \d{4} by ([^.]+)\.",
        "founded": r"founded in (\d{3,4})",
        "headquarters": r"headquartered in ([^.]+)\.",
        "city": r"is a university in ([^.]+)\.",
        "country": r"is a city in ([^,]+), ",
        "river": r", on the ([^.]+)\.",
        "capital": r"Its capital is ([^,]+), ",
        "language": r"official language is ([^.]+)\.",
        "independence": r"became independent in (\d{4})",
    }.items()
}
"""How the oracle reads each relation off an article's sentences."""


_KIND_OF = {
    "birthplace": "city",
    "setting": "city",
    "headquarters": "city",
    "city": "city",
    "capital": "city",
    "country": "country",
    "director": "person",
    "author": "person",
    "founder": "person",
    "studio": "company",
    "publisher": "company",
    "alma_mater": "university",
}
"""The kind of entity a relation names (for the oracle's queries)."""

_KIND_WORDS = {
    "person": "born",
    "city": "city",
    "country": "country",
    "university": "university",
    "company": "company",
    "film": "film",
    "novel": "novel",
    "": "",
}


@cache
def _templates_by_specificity() -> tuple[Template, ...]:
    """Question forms, those with the most fixed words first (``Who founded the studio that
    produced the film {}?`` is tried before ``Who founded {}?``)."""
    return tuple(sorted(TEMPLATES, key=lambda t: -len(t.text.replace("{}", ""))))


def _parse_question(text: str) -> tuple[Template, tuple[str, ...]] | None:
    for template in _templates_by_specificity():
        match = template.pattern.match(text)
        if match:
            return template, match.groups()
    return None
