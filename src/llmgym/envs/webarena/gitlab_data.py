"""The code-hosting site's data (WebArena's GitLab): users, groups, projects, members, labels,
milestones, issues with comments, merge requests and stars, generated from a seed.

Projects are named from word lists (``openkit/fast-json-parser``) and live in a group or in a
user's namespace; issues and merge requests are sentence templates over each project's
components. The signed-in user of every episode is user 1, ``byteblaze`` (Byte Blaze, WebArena's
GitLab account), who owns a few projects and is a member of many more.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.generation import random_date, random_datetime, wordlist
from llmgym.envs.webarena.shop_data import FIRST_NAMES, LAST_NAMES
from llmgym.envs.webarena.web import password_hash

__all__ = [
    "GITLAB_NOW",
    "GITLAB_PASSWORD",
    "GITLAB_SESSION",
    "GITLAB_TODAY",
    "GITLAB_USER",
    "LABELS",
    "ROLES",
    "VISIBILITIES",
    "GitlabData",
]

GITLAB_TODAY = "2023-12-31"
GITLAB_NOW = f"{GITLAB_TODAY} 12:00"
"""When everything done on the site happens; generated issues and notes are all older."""
GITLAB_SESSION = "byteblaze-session"
"""The GitLab session of the signed-in user (user 1) in the generated data."""
GITLAB_USER = "byteblaze"
GITLAB_PASSWORD = "hello1234"
ROLES = ("Guest", "Reporter", "Developer", "Maintainer", "Owner")
VISIBILITIES = ("Private", "Internal", "Public")

_SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE namespaces (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
    kind TEXT NOT NULL, owner_id INTEGER REFERENCES users(id)
);
CREATE TABLE projects (
    id INTEGER PRIMARY KEY, namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
    path TEXT NOT NULL, description TEXT NOT NULL, visibility TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (namespace_id, path)
);
CREATE TABLE members (
    project_id INTEGER NOT NULL REFERENCES projects(id), user_id INTEGER NOT NULL
    REFERENCES users(id), role TEXT NOT NULL, PRIMARY KEY (project_id, user_id)
);
CREATE TABLE labels (
    id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL, color TEXT NOT NULL, UNIQUE (project_id, name)
);
CREATE TABLE milestones (
    id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    title TEXT NOT NULL, due_date TEXT NOT NULL, state TEXT NOT NULL, UNIQUE (project_id, title)
);
CREATE TABLE issues (
    id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id), assignee_id INTEGER REFERENCES users(id),
    milestone_id INTEGER REFERENCES milestones(id), state TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (project_id, iid)
);
CREATE TABLE issue_labels (
    issue_id INTEGER NOT NULL REFERENCES issues(id), label_id INTEGER NOT NULL
    REFERENCES labels(id), PRIMARY KEY (issue_id, label_id)
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL REFERENCES issues(id),
    author_id INTEGER NOT NULL REFERENCES users(id), body TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE merge_requests (
    id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL,
    source_branch TEXT NOT NULL, target_branch TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id), assignee_id INTEGER REFERENCES users(id),
    state TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (project_id, iid)
);
CREATE TABLE stars (
    user_id INTEGER NOT NULL REFERENCES users(id), project_id INTEGER NOT NULL
    REFERENCES projects(id), PRIMARY KEY (user_id, project_id)
);
"""
_INDEXES = """
CREATE INDEX members_by_user ON members (user_id);
CREATE INDEX issues_by_state ON issues (project_id, state, created_at);
CREATE INDEX issues_by_assignee ON issues (assignee_id, state);
CREATE INDEX issues_by_milestone ON issues (milestone_id, state);
CREATE INDEX issues_by_update ON issues (updated_at);
CREATE INDEX issue_labels_by_label ON issue_labels (label_id);
CREATE INDEX notes_by_issue ON notes (issue_id);
CREATE INDEX mrs_by_state ON merge_requests (project_id, state, created_at);
CREATE INDEX mrs_by_assignee ON merge_requests (assignee_id, state);
CREATE INDEX stars_by_project ON stars (project_id);
"""
"""Created after the bulk inserts."""

GROUPS = (
    ("openkit", "OpenKit"),
    ("datalab", "Data Lab"),
    ("webcraft", "Webcraft"),
    ("kubeworks", "KubeWorks"),
    ("pixelforge", "Pixel Forge"),
    ("toolsmiths", "Toolsmiths"),
    ("a11yproject", "The A11Y Project"),
    ("geoatlas", "GeoAtlas"),
)
PROJECT_PREFIXES = wordlist(
    "fast tiny open smart cloud data web py go rusty micro hyper lazy async simple mega"
)
PROJECT_NOUNS = wordlist(
    "parser router dashboard cli scheduler cache toolkit gateway linter notebook sync engine "
    "bot viewer tracker api"
)
PROJECT_TOPICS = wordlist("json yaml markdown image log metrics auth search chat map pdf email")
COMPONENTS = (
    "login page",
    "settings page",
    "search index",
    "export button",
    "CLI flags",
    "config loader",
    "cache layer",
    "API client",
    "date picker",
    "file upload",
    "dark mode",
    "test suite",
    "build script",
    "docs site",
    "error handler",
    "user profile",
    "sidebar",
    "notification emails",
    "CSV export",
    "webhooks",
    "rate limiter",
    "installer",
    "plugin loader",
    "query builder",
)
ISSUE_TEMPLATES = (
    "{Component} crashes when {action}",
    "Add support for {feature}",
    "Update documentation for the {component}",
    "{Component} is slow on {platform}",
    "Improve error messages in the {component}",
    "Refactor the {component}",
    "Typo in the {component} docs",
    "Flaky test in the {component}",
    "{Component} does not work with {feature}",
    "Allow configuring the {component}",
    "Remove deprecated {component} options",
    "{Component} shows wrong data after {action}",
    "Translate the {component} into {language}",
    "Accessibility: {component} is not keyboard friendly",
)
MR_TEMPLATES = (
    "Fix {component} crash when {action}",
    "Add {feature} support",
    "Speed up the {component}",
    "Refactor the {component}",
    "Docs: explain the {component}",
    "Bump {dependency} to {version}",
    "Draft: rework the {component}",
    "Add tests for the {component}",
)
ACTIONS = (
    "saving twice",
    "the network drops",
    "uploading large files",
    "switching languages",
    "logging out",
    "resizing the window",
    "using an empty config",
    "running in parallel",
)
FEATURES = (
    "dark mode",
    "SSO login",
    "Python 3.12",
    "ARM builds",
    "webhooks",
    "two-factor auth",
    "CSV import",
    "proxy servers",
    "Unicode file names",
    "custom themes",
)
PLATFORMS = ("Windows", "macOS", "Linux", "Android", "iOS", "Safari", "Firefox")
LANGUAGES = ("German", "French", "Spanish", "Japanese", "Portuguese")
DEPENDENCIES = ("requests", "lodash", "webpack", "numpy", "django", "react", "openssl")
LABELS = (
    ("bug", "#d9534f"),
    ("feature", "#5cb85c"),
    ("documentation", "#428bca"),
    ("enhancement", "#5bc0de"),
    ("question", "#f0ad4e"),
    ("good first issue", "#7f8c8d"),
    ("help wanted", "#8e44ad"),
    ("performance", "#e67e22"),
    ("security", "#c0392b"),
    ("UI", "#16a085"),
)
MILESTONES = ("v1.0", "v1.1", "v1.2", "v2.0", "v2.1", "Sprint 12", "Sprint 13", "Q4 2023")
NOTES = (
    "I can reproduce this on the latest version.",
    "Thanks for the report! Looking into it.",
    "Could you share the full stack trace?",
    "This should be fixed on main now.",
    "Same here, it started after the last update.",
    "I opened a merge request for this.",
    "Is anyone working on this? I would like to take it.",
    "Closing as a duplicate.",
    "+1, this affects our team too.",
    "Let's discuss this in the next planning meeting.",
)


class GitlabData(Dataset):
    """The code-hosting site's database (see the module docstring)."""

    name = "gitlab"
    version = 1
    users: ClassVar[int] = 300
    projects: ClassVar[int] = 90
    issues: ClassVar[int] = 5_000
    merge_requests: ClassVar[int] = 1_500

    def build(self, db: sqlite3.Connection, seed: int) -> None:
        db.executescript(_SCHEMA)
        rng = TaskRng("webarena-gitlab", seed)
        self._users(db, rng)
        members = self._projects(db, rng)
        labels, milestones = self._labels(db, rng)
        self._issues(db, rng, members, labels, milestones)
        self._merge_requests(db, rng, members)
        popularity = [rng.randint(1, 12) for _ in range(self.projects)]
        projects = range(1, self.projects + 1)
        stars = {
            (rng.randint(2, self.users), rng.weighted_choice(projects, popularity))
            for _ in range(1_500)
        }
        stars.update((1, project) for project in rng.sample(range(1, self.projects + 1), 5))
        db.executemany("INSERT INTO stars VALUES (?, ?)", sorted(stars))
        db.executescript(_INDEXES)
        db.execute(
            "INSERT INTO sessions (sid, site, user_id) VALUES (?, 'gitlab', 1)", (GITLAB_SESSION,)
        )

    def _users(self, db: sqlite3.Connection, rng: TaskRng) -> None:
        rows = [(1, GITLAB_USER, "Byte Blaze")]
        usernames, names = {GITLAB_USER}, {"Byte Blaze"}
        while len(rows) < self.users:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            name = f"{first} {last}"
            username = f"{first[0]}{last}".lower()
            if username in usernames:
                username = f"{first.lower()}{last.lower()}"
            if name in names or username in usernames:
                continue
            names.add(name)
            usernames.add(username)
            rows.append((len(rows) + 1, username, name))
        db.executemany(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?)",
            [
                (
                    index,
                    username,
                    name,
                    password_hash(GITLAB_PASSWORD, username),
                    random_date(rng, 2020, 2023),
                )
                for index, username, name in rows
            ],
        )

    def _projects(self, db: sqlite3.Connection, rng: TaskRng) -> dict[int, list[int]]:
        namespaces: list[tuple[int, str, str, str, int | None]] = [
            (i, path, name, "group", None) for i, (path, name) in enumerate(GROUPS, 1)
        ]
        owners = [1, *rng.sample(range(2, self.users + 1), 11)]
        for owner in owners:
            username = db.execute("SELECT username, name FROM users WHERE id = ?", (owner,))
            path, name = username.fetchone()
            namespaces.append((len(namespaces) + 1, path, name, "user", owner))
        db.executemany("INSERT INTO namespaces VALUES (?, ?, ?, ?, ?)", namespaces)
        projects: list[tuple[int, int, str, str, str, str, str]] = []
        members: dict[int, list[int]] = {}
        member_rows: list[tuple[int, int, str]] = []
        seen: set[tuple[int, str]] = set()
        while len(projects) < self.projects:
            index = len(projects) + 1
            namespace = 9 if index <= 6 else rng.randint(1, len(namespaces))
            path = "-".join(
                (
                    rng.choice(PROJECT_PREFIXES),
                    rng.choice(PROJECT_TOPICS),
                    rng.choice(PROJECT_NOUNS),
                )
            )
            if (namespace, path) in seen:
                continue
            seen.add((namespace, path))
            topic, noun = path.split("-")[1:]
            created = random_date(rng, 2020, 2023)
            projects.append(
                (
                    index,
                    namespace,
                    path,
                    f"The {topic} {noun}: small, fast and well tested.",
                    rng.weighted_choice(VISIBILITIES, (2, 1, 5)),
                    created,
                    max(created, random_date(rng, 2020, 2023)),
                )
            )
            user_owner = namespaces[namespace - 1][4]  # None: a group's project
            team = {user_owner or rng.randint(2, self.users): "Owner"}
            if user_owner != 1 and rng.random() < 0.35:
                team[1] = rng.choice(ROLES[1:4])
            for _ in range(rng.randint(3, 14)):
                team.setdefault(rng.randint(2, self.users), rng.choice(ROLES[:4]))
            members[index] = list(team)
            member_rows.extend((index, user, role) for user, role in team.items())
        db.executemany("INSERT INTO projects VALUES (?, ?, ?, ?, ?, ?, ?)", projects)
        db.executemany("INSERT INTO members VALUES (?, ?, ?)", member_rows)
        return members

    def _labels(
        self, db: sqlite3.Connection, rng: TaskRng
    ) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        labels: dict[int, list[int]] = {}
        milestones: dict[int, list[int]] = {}
        label_rows: list[tuple[int, int, str, str]] = []
        milestone_rows: list[tuple[int, int, str, str, str]] = []
        for project in range(1, self.projects + 1):
            for name, color in rng.sample(LABELS, rng.randint(4, 8)):
                label_rows.append((len(label_rows) + 1, project, name, color))
                labels.setdefault(project, []).append(len(label_rows))
            for title in rng.sample(MILESTONES, rng.randint(1, 4)):
                due = random_date(rng, 2023, 2024)
                state = "closed" if due < "2023-10" else "active"
                milestone_rows.append((len(milestone_rows) + 1, project, title, due, state))
                milestones.setdefault(project, []).append(len(milestone_rows))
        db.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", label_rows)
        db.executemany("INSERT INTO milestones VALUES (?, ?, ?, ?, ?)", milestone_rows)
        return labels, milestones

    def _issues(
        self,
        db: sqlite3.Connection,
        rng: TaskRng,
        members: dict[int, list[int]],
        labels: dict[int, list[int]],
        milestones: dict[int, list[int]],
    ) -> None:
        weights = [rng.randint(1, 12) for _ in range(self.projects)]
        issues, tags, notes = [], [], []
        counters = dict.fromkeys(range(1, self.projects + 1), 0)
        dates = sorted(random_datetime(rng, 2021, 2023) for _ in range(self.issues))
        for index, created in enumerate(dates, start=1):
            project = rng.weighted_choice(range(1, self.projects + 1), weights)
            counters[project] += 1
            team = members[project]
            words = _words(rng)
            state = "closed" if rng.random() < 0.45 else "opened"
            assignee = None if rng.random() < 0.3 else rng.choice(team)
            milestone = rng.choice(milestones[project]) if rng.random() < 0.5 else None
            issues.append(
                (
                    index,
                    project,
                    counters[project],
                    rng.choice(ISSUE_TEMPLATES).format(**words),
                    f"Steps to reproduce: open the {words['component']} and try "
                    f"{words['action']}. Expected it to work on {words['platform']}.",
                    rng.choice(team),
                    assignee,
                    milestone,
                    state,
                    created,
                    created,
                )
            )
            for label in rng.sample(
                labels[project], rng.weighted_choice((0, 1, 2, 3), (3, 5, 3, 1))
            ):
                tags.append((index, label))
            for _ in range(rng.weighted_choice((0, 1, 2, 4), (4, 3, 2, 1))):
                notes.append((index, rng.choice(team), rng.choice(NOTES), created))
        db.executemany("INSERT INTO issues VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", issues)
        db.executemany("INSERT INTO issue_labels VALUES (?, ?)", tags)
        db.executemany(
            "INSERT INTO notes (issue_id, author_id, body, created_at) VALUES (?, ?, ?, ?)", notes
        )

    def _merge_requests(
        self, db: sqlite3.Connection, rng: TaskRng, members: dict[int, list[int]]
    ) -> None:
        rows = []
        counters = dict.fromkeys(range(1, self.projects + 1), 0)
        dates = sorted(random_datetime(rng, 2021, 2023) for _ in range(self.merge_requests))
        for index, created in enumerate(dates, start=1):
            project = rng.randint(1, self.projects)
            counters[project] += 1
            team = members[project]
            slots = _words(rng)
            title = rng.choice(MR_TEMPLATES).format(**slots)
            words = [w for w in title.removeprefix("Draft: ").lower().split() if w not in _STOP]
            branch = "".join(c for c in "-".join(words[:4]) if c.isalnum() or c in "-.")
            rows.append(
                (
                    index,
                    project,
                    counters[project],
                    title,
                    f"Closes the issue about the {slots['component']}.",
                    f"{branch}-{counters[project]}",
                    "main",
                    rng.choice(team),
                    rng.choice(team) if rng.random() < 0.7 else None,
                    rng.weighted_choice(("opened", "merged", "closed"), (3, 5, 1)),
                    created,
                )
            )
        db.executemany("INSERT INTO merge_requests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


_STOP = frozenset(("the", "for", "to", "when", "a"))


def _words(rng: TaskRng) -> dict[str, str]:
    """Slot values of one issue or merge-request template, from a single 64-bit draw."""
    bits = rng.next_u64()
    picked = {}
    for slot, choices in (
        ("component", COMPONENTS),
        ("action", ACTIONS),
        ("feature", FEATURES),
        ("platform", PLATFORMS),
        ("language", LANGUAGES),
        ("dependency", DEPENDENCIES),
    ):
        bits, index = divmod(bits, len(choices))
        picked[slot] = choices[index]
    picked["Component"] = picked["component"][:1].upper() + picked["component"][1:]
    picked["version"] = f"{bits % 5 + 1}.{bits // 5 % 20}.{bits // 100 % 10}"
    return picked
