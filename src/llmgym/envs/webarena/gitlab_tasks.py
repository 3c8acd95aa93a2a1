"""Task templates on the code-hosting site (``localhost:8023``), signed in as byteblaze.

Information seeking (issue counts by state, label, assignee and milestone; an issue's assignee
and author; members' roles; milestone due dates; stars; a merge request's branch; a group's
most-starred project), navigation (filtered issue lists, merge requests by state, an issue's
page) and changes (create, close, reopen, comment on and assign issues; add a member; star a
project; create a project; merge a merge request).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlencode

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.checks import only_added
from llmgym.envs.webarena.gitlab import Gitlab, slug
from llmgym.envs.webarena.gitlab_data import (
    COMPONENTS,
    FEATURES,
    GITLAB_NOW,
    NOTES,
    ROLES,
    VISIBILITIES,
    GitlabData,
)
from llmgym.envs.webarena.tasks import (
    Data,
    Instance,
    PageView,
    ProgramCheck,
    StringMatch,
    SubjectTemplate,
    TaskTemplate,
    UrlMatch,
    done_when,
    need,
    register,
)

__all__ = ["GITLAB", "open_item", "open_project", "project_tab"]

GITLAB = f"http://localhost:{Gitlab.port}"
START = f"{GITLAB}/"
SEARCH_BOX = "Search GitLab"
FILTER_BOX = "Search or filter results..."
_MR_STATES = {"merged": "merged", "closed": "closed", "all": "open, merged and closed"}
_TABS = {
    "Issues": "issues",
    "Merge requests": "merge_requests",
    "Members": "project_members",
    "Labels": "labels",
    "Milestones": "milestones",
}


# ---------------------------------------------------------------------------- draws
def projects(data: Data) -> list[tuple[int, str]]:
    """Every project: (id, full path)."""
    return data.generated(
        GitlabData,
        "SELECT p.id, n.path || '/' || p.path FROM projects p JOIN namespaces n ON "
        "n.id = p.namespace_id ORDER BY p.id",
    )


def items(data: Data, kind: str) -> list[tuple]:
    """Issues (``kind="issues"``) or merge requests whose title is unique in their project:
    (id, project path, iid, title, state, author name, assignee name)."""
    return data.generated(
        GitlabData,
        f"SELECT i.id, n.path || '/' || p.path, i.iid, i.title, i.state, a.name, b.name "
        f"FROM {kind} i JOIN projects p ON p.id = i.project_id JOIN namespaces n ON "
        "n.id = p.namespace_id JOIN users a ON a.id = i.author_id LEFT JOIN users b ON "
        f"b.id = i.assignee_id WHERE (i.project_id, i.title) IN (SELECT project_id, title "
        f"FROM {kind} GROUP BY project_id, title HAVING count(*) = 1) ORDER BY i.id",
    )


def project_id(data: Data, path: str) -> int:
    return next(pid for pid, full in projects(data) if full == path)


# ---------------------------------------------------------------------------- oracle helpers
def in_project(page: PageView, path: str) -> bool:
    return page.path == f"/{path}" or page.path.startswith(f"/{path}/-/")


def open_project(page: PageView, path: str) -> str | None:
    """Find the project ``path`` with the search box and open it; ``None`` once in it."""
    if in_project(page, path):
        return None
    found = page.find("link", path)
    if found is not None:
        return page.click(found)
    box = need(page.find("textbox", SEARCH_BOX), "search box")
    return page.type(box, path)


def project_tab(page: PageView, path: str, tab: str) -> str | None:
    """Open the project's ``tab`` (``"Issues"``, ``"Members"``, ...); ``None`` once there."""
    if page.path == f"/{path}/-/{_TABS[tab]}":
        return None
    step = open_project(page, path)
    if step:
        return step
    menu = need(page.find("navigation", "Project navigation"), "project menu")
    return page.click(need(page.find("link", tab, after=menu), tab))


def open_item(page: PageView, path: str, title: str, tab: str = "Issues") -> str | None:
    """Open the issue (or merge request, ``tab="Merge requests"``) ``title`` of the project
    ``path`` from its list, searching all states for the title; ``None`` once open."""
    if page.path.startswith(f"/{path}/-/{_TABS[tab]}/") and page.find("heading", title):
        return None
    step = project_tab(page, path, tab)
    if step:
        return step
    if page.query.get("state") != "all":
        return page.link("All ", prefix=True)
    if page.query.get("search") != title:
        return page.type(need(page.find("textbox", FILTER_BOX), "filter box"), title)
    found = page.find("link", title)
    if found is None:
        return page.link("Next")
    return page.click(found)


def count_text(page: PageView, noun: str) -> str:
    """The ``N issues`` count of a list page, as ``N``."""
    node = next((n for n in page.nodes("StaticText") if n.name.endswith(f" {noun}")), None)
    return need(node, f"{noun} count").name.split()[0]


def table_row(page: PageView, first: str) -> list[str]:
    """The cells (text) of the table row whose first cell is ``first``."""
    for row in page.rows():
        if row and row[0].name == first:
            return [cell.name for cell in row]
    raise LookupError(f"no row {first!r}")


# ---------------------------------------------------------------------------- information
class ItemTemplate(SubjectTemplate):
    """A template about one issue (or merge request) named by its title and project:
    :meth:`about` gets a row of :func:`items`."""

    sites = ("gitlab",)
    table: ClassVar[str] = "issues"

    def subject(self, data: Data, rng: TaskRng) -> tuple:
        return rng.choice(items(data, self.table))


@register
class IssuePerson(ItemTemplate):
    id = "gitlab/issue-person"
    slot = 67
    intent = "Who {role} the issue '{title}' in {project}?"
    _ROLES: ClassVar[dict[str, int]] = {"opened": 5, "is assigned to": 6}
    """Each question and its column of :func:`items`."""

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        role = rng.choice(sorted(self._ROLES))
        person = item[self._ROLES[role]]
        if person is None:
            return None
        return self.make(
            {"role": role, "title": item[3], "project": item[1]},
            (StringMatch(must_include=(person,)),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_item(page, params["project"], params["title"])
        if step:
            return step
        if params["role"] == "is assigned to":
            return f"stop [{need(page.text('Assignee: '), 'assignee')}]"
        byline = need(page.find("StaticText", prefix="Issue #"), "byline")
        return f"stop [{need(page.find('link', after=byline), 'author').name}]"


@register
class MergeRequestBranch(ItemTemplate):
    id = "gitlab/mr-source-branch"
    slot = 68
    intent = "What is the source branch of the merge request '{title}' in {project}?"
    table = "merge_requests"

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        branch = data.one(
            GitlabData, "SELECT source_branch FROM merge_requests WHERE id = ?", item[0]
        )
        return self.make(
            {"title": item[3], "project": item[1]},
            (StringMatch(exact=branch),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_item(page, params["project"], params["title"], "Merge requests")
        if step:
            return step
        return f"stop [{need(page.text('Source branch: '), 'source branch')}]"


class ProjectTemplate(SubjectTemplate):
    """A template about one project: :meth:`about` gets its ``(id, full path)``."""

    sites = ("gitlab",)

    def subject(self, data: Data, rng: TaskRng) -> tuple[int, str]:
        return rng.choice(projects(data))


@register
class ProjectStars(ProjectTemplate):
    id = "gitlab/project-stars"
    slot = 69
    intent = "How many stars does the project {project} have?"

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        stars = data.one(GitlabData, "SELECT count(*) FROM stars WHERE project_id = ?", pid)
        return self.make({"project": path}, (StringMatch(exact=str(stars)),), start_url=START)

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path != f"/{params['project']}":
            return open_project(page, params["project"]) or page.link("Project overview")
        return f"stop [{need(page.text('Stars: '), 'stars')}]"


@register
class OpenIssueCount(ProjectTemplate):
    id = "gitlab/open-issue-count"
    slot = 70
    intent = "How many open issues of {project} have the {filter} {value}?"

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        if rng.random() < 0.5:
            label_id, value = rng.choice(
                data.all(GitlabData, "SELECT id, name FROM labels WHERE project_id = ?", pid)
            )
            count = data.one(
                GitlabData,
                "SELECT count(*) FROM issue_labels il JOIN issues i ON i.id = il.issue_id "
                "WHERE il.label_id = ? AND i.state = 'opened'",
                label_id,
            )
            return self.make(
                {"project": path, "filter": "label", "value": value},
                (StringMatch(exact=str(count)),),
                start_url=START,
            )
        user_id, value = rng.choice(
            data.all(
                GitlabData,
                "SELECT u.id, u.name FROM members m JOIN users u ON u.id = m.user_id "
                "WHERE m.project_id = ?",
                pid,
            )
        )
        count = data.one(
            GitlabData,
            "SELECT count(*) FROM issues WHERE project_id = ? AND assignee_id = ? "
            "AND state = 'opened'",
            pid,
            user_id,
        )
        return self.make(
            {"project": path, "filter": "assignee", "value": value},
            (StringMatch(exact=str(count)),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if params["filter"] == "label":
            step = project_tab(page, params["project"], "Labels")
            return step or f"stop [{table_row(page, params['value'])[1]}]"
        step = project_tab(page, params["project"], "Issues")
        if step:
            return step
        assignee = need(page.find("combobox", "Assignee"), "assignee filter")
        if page.query.get("assignee_username") and page.selected(assignee) == params["value"]:
            if page.query.get("state", "opened") == "opened":
                return f"stop [{count_text(page, 'issues')}]"
            return page.link("Open ", prefix=True)
        return page.choose(assignee, params["value"]) or page.button("Filter results")


@register
class MilestoneFact(ProjectTemplate):
    id = "gitlab/milestone-fact"
    slot = 71
    intent = "What is the {fact} of the milestone {milestone} in {project}?"
    _FACTS: ClassVar[dict[str, int]] = {
        "due date": 1,
        "number of open issues": 3,
        "number of closed issues": 4,
    }
    """Each fact and its column of the Milestones table."""

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        milestone_id, title, due = rng.choice(
            data.all(
                GitlabData, "SELECT id, title, due_date FROM milestones WHERE project_id = ?", pid
            )
        )
        fact = rng.choice(sorted(self._FACTS))
        if fact == "due date":
            answer = due
        else:
            state = "opened" if "open" in fact else "closed"
            answer = str(
                data.one(
                    GitlabData,
                    "SELECT count(*) FROM issues WHERE milestone_id = ? AND state = ?",
                    milestone_id,
                    state,
                )
            )
        return self.make(
            {"fact": fact, "milestone": title, "project": path},
            (StringMatch(exact=answer),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = project_tab(page, params["project"], "Milestones")
        if step:
            return step
        return f"stop [{table_row(page, params['milestone'])[self._FACTS[params['fact']]]}]"


@register
class MemberRole(ProjectTemplate):
    id = "gitlab/member-role"
    slot = 72
    intent = "What is the role of {user} in the project {project}?"

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        name, role = rng.choice(
            data.all(
                GitlabData,
                "SELECT u.name, m.role FROM members m JOIN users u ON u.id = m.user_id "
                "WHERE m.project_id = ?",
                pid,
            )
        )
        return self.make(
            {"user": name, "project": path}, (StringMatch(exact=role),), start_url=START
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = project_tab(page, params["project"], "Members")
        if step:
            return step
        return f"stop [{table_row(page, params['user'])[2]}]"


# ---------------------------------------------------------------------------- navigation
@register
class FilteredIssues(ProjectTemplate):
    id = "gitlab/nav-filtered-issues"
    slot = 73
    kind = "navigation"
    intent = "Show me the issues of {project} with the {filter} {value}."
    _FILTERS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "label": ("label_name", "Labels", "SELECT name FROM labels WHERE project_id = ?"),
        "milestone": (
            "milestone_title",
            "Milestones",
            "SELECT title FROM milestones WHERE project_id = ?",
        ),
    }
    """Each filter: its query parameter, the project page listing its values, their query."""

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        kind = rng.choice(sorted(self._FILTERS))
        parameter, _, query = self._FILTERS[kind]
        value = rng.choice(data.all(GitlabData, query, pid))[0]
        return self.make(
            {"project": path, "filter": kind, "value": value},
            (UrlMatch(f"{GITLAB}/{path}/-/issues?{urlencode({parameter: value})}"),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        parameter, tab, _ = self._FILTERS[params["filter"]]
        if page.path.endswith("/-/issues") and page.query.get(parameter) == params["value"]:
            return "stop []"
        return project_tab(page, params["project"], tab) or page.link(params["value"])


@register
class MergeRequestsByState(ProjectTemplate):
    id = "gitlab/nav-merge-requests"
    slot = 74
    kind = "navigation"
    intent = "Show me the {state} merge requests of {project}."

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        path = project[1]
        state = rng.choice(sorted(_MR_STATES))
        return self.make(
            {"state": _MR_STATES[state], "project": path},
            (UrlMatch(f"{GITLAB}/{path}/-/merge_requests?state={state}"),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        state = next(key for key, words in _MR_STATES.items() if words == params["state"])
        step = project_tab(page, params["project"], "Merge requests")
        if step:
            return step
        if page.query.get("state") == state:
            return "stop []"
        tabs = need(page.find("navigation", "States"), "state tabs")
        label = "All" if state == "all" else state.title()
        return page.click(need(page.find("link", prefix=f"{label} ", after=tabs), label))


@register
class OpenIssue(ItemTemplate):
    id = "gitlab/nav-issue"
    slot = 75
    kind = "navigation"
    intent = "Open the issue '{title}' of {project}."

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        return self.make(
            {"title": item[3], "project": item[1]},
            (UrlMatch(f"{GITLAB}/{item[1]}/-/issues/{item[2]}"),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return open_item(page, params["project"], params["title"]) or "stop []"


# ---------------------------------------------------------------------------- changes
def issue_state(state: Data, issue_id: int) -> tuple | None:
    row = state.all(
        GitlabData,
        "SELECT state, assignee_id, milestone_id FROM issues WHERE id = ?",
        issue_id,
    )
    return row[0] if row else None


@register
class IssueState(ItemTemplate):
    id = "gitlab/issue-state"
    slot = 76
    kind = "change"
    intent = "{action} the issue '{title}' in {project}."
    _ACTIONS: ClassVar[dict[str, tuple[str, str]]] = {
        "opened": ("Close", "closed"),
        "closed": ("Reopen", "opened"),
    }
    """By the issue's state: the action and the state after it."""

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        return self.make(
            {"action": self._ACTIONS[item[4]][0], "title": item[3], "project": item[1]},
            (ProgramCheck(),),
            start_url=START,
            reference={"issue_id": item[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        after = "closed" if instance.params["action"] == "Close" else "opened"
        # The site stamps every issue it changes with GITLAB_NOW; generated issues are older.
        changed = state.all(
            GitlabData, "SELECT id, state FROM issues WHERE updated_at >= ?", GITLAB_NOW
        )
        return changed == [(instance.reference["issue_id"], after)]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        done = "closed" if params["action"] == "Close" else "reopened"
        step = done_when(page, f"The issue was {done}.") or open_item(
            page, params["project"], params["title"]
        )
        return step or page.button(f"{params['action']} issue")


@register
class CommentOnIssue(ItemTemplate):
    id = "gitlab/comment-issue"
    slot = 77
    kind = "change"
    intent = "Comment '{text}' on the issue '{title}' in {project}."

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        return self.make(
            {"text": rng.choice(NOTES), "title": item[3], "project": item[1]},
            (ProgramCheck(),),
            start_url=START,
            reference={"issue_id": item[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        rows = state.all(
            GitlabData,
            "SELECT issue_id, author_id, body FROM notes WHERE id > ?",
            state.initial.one(GitlabData, "SELECT max(id) FROM notes"),
        )
        return rows == [(instance.reference["issue_id"], 1, instance.params["text"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "Your comment was added.") or open_item(
            page, params["project"], params["title"]
        )
        return step or page.fill({"Comment": params["text"]}) or page.button("Comment")


@register
class AssignIssue(ItemTemplate):
    id = "gitlab/assign-issue"
    slot = 78
    kind = "change"
    intent = "Assign the issue '{title}' in {project} to {user}."

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        pid = project_id(data, item[1])
        user_id, name = rng.choice(
            data.all(
                GitlabData,
                "SELECT u.id, u.name FROM members m JOIN users u ON u.id = m.user_id "
                "WHERE m.project_id = ?",
                pid,
            )
        )
        if name == item[6]:
            return None
        return self.make(
            {"title": item[3], "project": item[1], "user": name},
            (ProgramCheck(),),
            start_url=START,
            reference={"issue_id": item[0], "user_id": user_id},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        issue = instance.reference["issue_id"]
        before, after = issue_state(state.initial, issue), issue_state(state, issue)
        if before is None or after is None:
            return False
        return after == (before[0], instance.reference["user_id"], before[2])

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "The issue was updated.") or open_item(
            page, params["project"], params["title"]
        )
        if step:
            return step
        assignee = need(page.find("combobox", "Assignee"), "assignee")
        return page.choose(assignee, params["user"]) or page.button("Save changes")


@register
class CreateIssue(ProjectTemplate):
    id = "gitlab/create-issue"
    slot = 79
    kind = "change"
    intent = "Create an issue in {project} titled '{title}' with the label '{label}'."

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        label = rng.choice(
            data.all(GitlabData, "SELECT name FROM labels WHERE project_id = ?", pid)
        )
        title = rng.choice(
            (
                f"Support {rng.choice(FEATURES)} in the {rng.choice(COMPONENTS)}",
                f"The {rng.choice(COMPONENTS)} needs better tests",
                f"Document the {rng.choice(COMPONENTS)}",
            )
        )
        return self.make(
            {"project": path, "title": title, "label": label[0]},
            (ProgramCheck(),),
            start_url=START,
            reference={"project_id": pid},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        rows = state.all(
            GitlabData,
            "SELECT i.project_id, i.author_id, i.title, i.state, (SELECT group_concat(l.name) "
            "FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id) "
            "FROM issues i WHERE i.id > ?",
            GitlabData.issues,
        )
        p = instance.params
        return rows == [(instance.reference["project_id"], 1, p["title"], "opened", p["label"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "The issue was created.")
        if step:
            return step
        if page.path != f"/{params['project']}/-/issues/new":
            return project_tab(page, params["project"], "Issues") or page.link("New issue")
        label = need(page.find("combobox", "Label"), "label")
        return (
            page.fill({"Title": params["title"]})
            or page.choose(label, params["label"])
            or page.button("Create issue")
        )


@register
class AddMember(ProjectTemplate):
    id = "gitlab/add-member"
    slot = 80
    kind = "change"
    intent = "Add the user {username} to the project {project} as a {role}."

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        user_id, username = data.all(
            GitlabData, "SELECT id, username FROM users WHERE id = ?", rng.randint(2, 300)
        )[0]
        if data.one(
            GitlabData, "SELECT 1 FROM members WHERE project_id = ? AND user_id = ?", pid, user_id
        ):
            return None
        return self.make(
            {"username": username, "project": path, "role": rng.choice(ROLES[:4])},
            (ProgramCheck(),),
            start_url=START,
            reference={"project_id": pid, "user_id": user_id},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        added = (instance.reference["project_id"], instance.reference["user_id"])
        query = "SELECT project_id, user_id, role FROM members"
        return only_added(state, GitlabData, query, (*added, instance.params["role"]))

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        message = f"{params['username']} was added to the project as {params['role']}."
        step = done_when(page, message) or project_tab(page, params["project"], "Members")
        if step:
            return step
        role = need(page.find("combobox", "Select a role"), "role")
        return (
            page.fill({"Username": params["username"]})
            or page.choose(role, params["role"])
            or page.button("Invite")
        )


@register
class StarProject(ProjectTemplate):
    id = "gitlab/star-project"
    slot = 81
    kind = "change"
    intent = "Star the project {project}."

    def about(self, data: Data, rng: TaskRng, project: tuple[int, str]) -> Instance | None:
        pid, path = project
        if data.one(GitlabData, "SELECT 1 FROM stars WHERE user_id = 1 AND project_id = ?", pid):
            return None
        return self.make(
            {"project": path}, (ProgramCheck(),), start_url=START, reference={"project_id": pid}
        )

    def check(self, state: Data, instance: Instance) -> bool:
        query = "SELECT project_id FROM stars WHERE user_id = 1"
        return only_added(state, GitlabData, query, (instance.reference["project_id"],))

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, f"You starred {params['project']}.")
        if step:
            return step
        if page.path != f"/{params['project']}":
            return open_project(page, params["project"]) or page.link("Project overview")
        return page.button("Star")


@register
class CreateProject(TaskTemplate):
    id = "gitlab/create-project"
    slot = 82
    kind = "change"
    intent = "Create a new {visibility} project named '{name}' in my namespace."
    sites = ("gitlab",)
    _NAMES = ("Notes", "Playground", "Dotfiles", "Homepage", "Scripts", "Recipes", "Budget")

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        name = f"{rng.choice(self._NAMES)} {rng.choice(('App', 'Tools', 'Site', 'Lab', '2024'))}"
        return self.make(
            {"visibility": rng.choice(VISIBILITIES).lower(), "name": name},
            (ProgramCheck(),),
            start_url=START,
        )

    def check(self, state: Data, instance: Instance) -> bool:
        rows = state.all(
            GitlabData,
            "SELECT n.path, p.path, p.visibility FROM projects p JOIN namespaces n ON "
            "n.id = p.namespace_id WHERE p.id > ?",
            GitlabData.projects,
        )
        p = instance.params
        return rows == [("byteblaze", slug(p["name"]), p["visibility"].title())]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, f"Project '{params['name']}' was successfully created.")
        if step:
            return step
        if page.path != "/projects/new":
            return page.link("New project")
        visibility = need(page.find("combobox", "Visibility Level"), "visibility")
        return (
            page.fill({"Project name": params["name"]})
            or page.choose(visibility, params["visibility"].title())
            or page.button("Create project")
        )


@register
class MergeMergeRequest(ItemTemplate):
    id = "gitlab/merge-mr"
    slot = 83
    kind = "change"
    intent = "Merge the merge request '{title}' in {project}."
    table = "merge_requests"

    def about(self, data: Data, rng: TaskRng, item: tuple) -> Instance | None:
        if item[4] != "opened":
            return None
        return self.make(
            {"title": item[3], "project": item[1]},
            (ProgramCheck(),),
            start_url=START,
            reference={"mr_id": item[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        query = "SELECT id FROM merge_requests WHERE state = 'merged'"
        return only_added(state, GitlabData, query, (instance.reference["mr_id"],))

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "The merge request was merged.") or open_item(
            page, params["project"], params["title"], "Merge requests"
        )
        return step or page.button("Merge")
