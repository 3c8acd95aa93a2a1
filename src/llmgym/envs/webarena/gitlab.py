"""The code-hosting site (WebArena's GitLab): projects, issues, merge requests, members.

Pages: the dashboard (your projects, starred projects, issues and merge requests assigned to
you), Explore (every project, name filter, sorts), global search (projects, issues, merge
requests), group and user pages, and per project: the overview (Star button), issues (state
tabs with counts; search, author, assignee, label and milestone filters; sorts; pages of 20),
an issue's page (labels, assignee, milestone, comments; close or reopen; edit the assignee,
milestone and labels; comment), the new-issue form, merge requests (state tabs, search, a
merge request's page with Merge and Close buttons), members (invite with a role), labels and
milestones. ``/projects/new`` creates a project. Sign in at ``/users/sign_in``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar
from urllib.parse import urlencode

from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.gitlab_data import (
    GITLAB_NOW,
    GITLAB_TODAY,
    ROLES,
    VISIBILITIES,
    GitlabData,
)
from llmgym.envs.webarena.web import (
    Request,
    Response,
    Site,
    button,
    esc,
    flash_box,
    form,
    h,
    hidden,
    link,
    pager,
    route,
    search_form,
    select,
    table,
    textarea,
    textbox,
)

__all__ = ["ISSUE_SORTS", "PROJECT_SORTS", "Gitlab"]

PER_PAGE = 20
ISSUE_SORTS = {
    "created_date": ("Created date", "i.created_at DESC, i.iid DESC"),
    "created_asc": ("Oldest created", "i.created_at, i.iid"),
    "updated_desc": ("Updated date", "i.updated_at DESC, i.iid DESC"),
    "title_asc": ("Title", "i.title COLLATE NOCASE, i.iid"),
}
"""Issue and merge-request list orders: key -> (option text, SQL order)."""
PROJECT_SORTS = {
    "name_asc": ("Name", "full_path COLLATE NOCASE"),
    "stars_desc": ("Most stars", "stars DESC, full_path"),
    "latest_activity_desc": ("Updated date", "p.updated_at DESC, full_path"),
    "created_desc": ("Created date", "p.created_at DESC, full_path"),
}
ISSUE_STATES = (("opened", "Open"), ("closed", "Closed"), ("all", "All"))
MR_STATES = (("opened", "Open"), ("merged", "Merged"), ("closed", "Closed"), ("all", "All"))
MAX_TITLE = 255
MAX_TEXT = 10_000
_PATH = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
_PROJECTS = (
    "SELECT p.id, n.path || '/' || p.path AS full_path, p.description, "
    "(SELECT count(*) FROM stars s WHERE s.project_id = p.id) AS stars, p.updated_at "
    "FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
)


def slug(name: str) -> str:
    """A project path from its name: ``My New Project`` -> ``my-new-project``."""
    return "-".join(re.findall(r"[a-z0-9]+", name.lower()))[:100]


class Gitlab(Site):
    """The code-hosting site at ``localhost:8023`` (see the module docstring)."""

    name = "gitlab"
    title = "GitLab"
    port = 8023
    dataset: ClassVar[type[Dataset]] = GitlabData
    login_path = "/users/sign_in"
    public_paths = ("/users/sign_in",)
    login_required = True
    stylesheet = "header form{display:inline;margin-left:20px}"

    # ------------------------------------------------------------------ layout
    def layout(self, request: Request | None, title: str, body: str) -> str:
        user = request.user_id if request else None
        account = ""
        if user:
            username = self.db.execute("SELECT username FROM users WHERE id = ?", (user,))
            name = username.fetchone()[0]
            account = link(f"/{name}", f"@{name}") + link("/users/sign_out", "Sign out")
        search = search_form(request, "search", "Search GitLab", hidden("scope", "projects"))
        nav = h(
            "nav",
            link("/", "Projects")
            + link("/dashboard/issues", "Issues")
            + link("/dashboard/merge_requests", "Merge requests")
            + link("/explore/projects", "Explore")
            + link("/projects/new", "New project"),
            aria_label="Main",
        )
        flash = flash_box(request)
        header = h("header", link("/", self.title) + search + account)
        return self.document(f"{title} · GitLab", header + nav + h("main", flash + body))

    # ------------------------------------------------------------------ helpers
    def _project(self, namespace: str, project: str) -> dict[str, Any]:
        return self.row(
            "SELECT p.*, n.path AS namespace, n.path || '/' || p.path AS full_path, "
            "(SELECT count(*) FROM stars s WHERE s.project_id = p.id) AS stars "
            "FROM projects p JOIN namespaces n ON n.id = p.namespace_id "
            "WHERE n.path = ? AND p.path = ?",
            namespace,
            project,
        )

    def _project_nav(self, project: dict[str, Any]) -> str:
        base = f"/{project['full_path']}"
        return h(
            "nav",
            link(base, "Project overview")
            + link(f"{base}/-/issues", "Issues")
            + link(f"{base}/-/merge_requests", "Merge requests")
            + link(f"{base}/-/project_members", "Members")
            + link(f"{base}/-/labels", "Labels")
            + link(f"{base}/-/milestones", "Milestones"),
            aria_label="Project navigation",
        )

    def _project_page(
        self, request: Request, project: dict[str, Any], title: str, body: str
    ) -> Response:
        crumbs = h("p", link(f"/{project['namespace']}", project["namespace"]) + " / ")
        return self.page(
            request, f"{title} · {project['full_path']}", self._project_nav(project) + crumbs + body
        )

    def _members(self, project_id: int) -> list[tuple[str, str]]:
        """``(username, name)`` of the project's members, by name."""
        return self.db.execute(
            "SELECT u.username, u.name FROM members m JOIN users u ON u.id = m.user_id "
            "WHERE m.project_id = ? ORDER BY u.name",
            (project_id,),
        ).fetchall()

    def _user_id(self, username: str) -> int | None:
        row = self.db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
        return row[0] if row else None

    # ------------------------------------------------------------------ dashboard
    @route("/")
    def home(self, request: Request) -> Response:
        return self._dashboard_projects(request, starred=False)

    @route("/dashboard/projects/starred")
    def starred(self, request: Request) -> Response:
        return self._dashboard_projects(request, starred=True)

    def _dashboard_projects(self, request: Request, starred: bool) -> Response:
        where = (
            "p.id IN (SELECT project_id FROM stars WHERE user_id = ?)"
            if starred
            else "p.id IN (SELECT project_id FROM members WHERE user_id = ?)"
        )
        total = self.db.execute(
            f"SELECT count(*) FROM projects p WHERE {where}", (request.user_id,)
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"{_PROJECTS} WHERE {where} ORDER BY p.updated_at DESC, full_path LIMIT ? OFFSET ?",
            (request.user_id, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        tabs = h(
            "nav",
            link("/", "Your projects")
            + link("/dashboard/projects/starred", "Starred projects")
            + link("/explore/projects", "Explore projects"),
            aria_label="Project tabs",
        )
        heading = "Starred projects" if starred else "Your projects"
        body = h("h1", "Projects") + tabs + h("h2", heading) + self._project_table(rows)
        body += pager(request.path, {}, page, pages)
        return self.page(request, "Projects", body)

    @staticmethod
    def _project_table(rows: list[tuple]) -> str:
        if not rows:
            return h("p", "There are no projects to show.")
        return table(
            ("Project", "Description", "Stars", "Updated"),
            [
                [link(f"/{path}", path), esc(description), esc(stars), esc(updated)]
                for _, path, description, stars, updated in rows
            ],
        )

    @route("/dashboard/issues")
    def my_issues(self, request: Request) -> Response:
        return self._assigned(request, "issues", ISSUE_STATES, "Issues", "/-/issues/")

    @route("/dashboard/merge_requests")
    def my_merge_requests(self, request: Request) -> Response:
        return self._assigned(
            request, "merge_requests", MR_STATES, "Merge requests", "/-/merge_requests/"
        )

    def _assigned(
        self, request: Request, table_name: str, states: tuple, title: str, infix: str
    ) -> Response:
        state = request.arg("state", "opened")
        if state not in dict(states):
            state = "opened"
        condition = "" if state == "all" else "AND i.state = ?"
        params: tuple = (request.user_id,) if state == "all" else (request.user_id, state)
        total = self.db.execute(
            f"SELECT count(*) FROM {table_name} i WHERE i.assignee_id = ? {condition}", params
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"SELECT i.iid, i.title, n.path || '/' || p.path, i.state, i.created_at "
            f"FROM {table_name} i JOIN projects p ON p.id = i.project_id JOIN namespaces n ON "
            f"n.id = p.namespace_id WHERE i.assignee_id = ? {condition} "
            "ORDER BY i.created_at DESC, i.id DESC LIMIT ? OFFSET ?",
            (*params, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        path = f"/dashboard/{table_name}"
        body = h("h1", f"{title} assigned to me") + self._state_tabs(path, {}, states, state)
        body += h("p", esc(f"{total} {title.lower()}"))
        body += h(
            "ul",
            "".join(
                h(
                    "li",
                    link(f"/{project}{infix}{iid}", issue_title)
                    + h("p", esc(f"{project} · {created[:10]} · {status}")),
                )
                for iid, issue_title, project, status, created in rows
            ),
            aria_label=title,
        )
        body += pager(path, {"state": state}, page, pages)
        return self.page(request, f"{title} assigned to me", body)

    @staticmethod
    def _state_tabs(
        path: str,
        query: dict[str, str],
        states: tuple,
        current: str,
        counts: dict[str, int] | None = None,
    ) -> str:
        links = []
        for key, label in states:
            text = f"{label} {counts[key]}" if counts is not None else label
            anchor = link(f"{path}?{_query({**query, 'state': key})}", text)
            links.append(h("strong", anchor) if key == current else anchor)
        return h("nav", " ".join(links), aria_label="States")

    # ------------------------------------------------------------------ explore and search
    @route("/explore/projects")
    def explore(self, request: Request) -> Response:
        sort = request.arg("sort", "name_asc")
        if sort not in PROJECT_SORTS:
            sort = "name_asc"
        name = request.arg("name")[:100]
        query = f"SELECT * FROM ({_PROJECTS}) p"
        params = []
        if name:
            query += " WHERE p.full_path LIKE ? ESCAPE '\\'"
            params.append(f"%{_like(name)}%")
        total = self.db.execute(f"SELECT count(*) FROM ({query})", params).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"SELECT p.id, p.full_path, p.description, p.stars, p.updated_at FROM ({query}) p "
            f"ORDER BY {PROJECT_SORTS[sort][1]} LIMIT ? OFFSET ?",
            (*params, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        controls = form(
            "/explore/projects",
            textbox("name", "Filter by name", name)
            + select("sort", "Sort by", [(k, v[0]) for k, v in PROJECT_SORTS.items()], sort)
            + button("Filter"),
        )
        body = h("h1", "Explore projects") + controls + h("p", esc(f"{total} projects"))
        body += self._project_table(rows)
        body += pager("/explore/projects", {"name": name, "sort": sort}, page, pages)
        return self.page(request, "Explore projects", body)

    @route("/search")
    def search(self, request: Request) -> Response:
        text = request.search_arg("search")
        scope = request.arg("scope", "projects")
        scopes = (
            ("projects", "Projects"),
            ("issues", "Issues"),
            ("merge_requests", "Merge requests"),
        )
        if scope not in dict(scopes):
            scope = "projects"
        tabs = h(
            "nav",
            " ".join(
                link(f"/search?{_query({'search': text, 'scope': key})}", label)
                for key, label in scopes
            ),
            aria_label="Search scopes",
        )
        body = h("h1", "Search") + tabs
        if not text:
            return self.page(request, "Search", body + h("p", "Enter a search term."))
        like = f"%{_like(text)}%"
        if scope == "projects":
            source = f"SELECT * FROM ({_PROJECTS}) p WHERE p.full_path LIKE ? ESCAPE '\\'"
            total = self.db.execute(f"SELECT count(*) FROM ({source})", (like,)).fetchone()[0]
            page, pages = request.pagination(total, PER_PAGE)
            rows = self.db.execute(
                f"SELECT p.id, p.full_path, p.description, p.stars, p.updated_at FROM ({source}) "
                "p ORDER BY p.full_path LIMIT ? OFFSET ?",
                (like, PER_PAGE, (page - 1) * PER_PAGE),
            ).fetchall()
            results = self._project_table(rows)
        else:
            infix = "/-/issues/" if scope == "issues" else "/-/merge_requests/"
            total = self.db.execute(
                f"SELECT count(*) FROM {scope} WHERE title LIKE ? ESCAPE '\\'", (like,)
            ).fetchone()[0]
            page, pages = request.pagination(total, PER_PAGE)
            rows = self.db.execute(
                # Newest first by id (ids follow creation); the cross joins keep the scan in
                # that order so it stops after a page of matches.
                f"SELECT i.iid, i.title, n.path || '/' || p.path, i.state FROM {scope} i "
                "CROSS JOIN projects p CROSS JOIN namespaces n WHERE p.id = i.project_id "
                "AND n.id = p.namespace_id AND i.title LIKE ? ESCAPE '\\' ORDER BY i.id DESC "
                "LIMIT ? OFFSET ?",
                (like, PER_PAGE, (page - 1) * PER_PAGE),
            ).fetchall()
            results = h(
                "ul",
                "".join(
                    h(
                        "li",
                        link(f"/{path}{infix}{iid}", title) + h("p", esc(f"{path} · {state}")),
                    )
                    for iid, title, path, state in rows
                ),
                aria_label="Results",
            )
        body += h("p", esc(f"{total} results for '{text}'")) + results
        body += pager("/search", {"search": text, "scope": scope}, page, pages)
        return self.page(request, "Search", body)

    # ------------------------------------------------------------------ new project
    @route("/projects/new", methods=("GET", "POST"))
    def new_project(self, request: Request) -> Response:
        if request.method == "POST":
            return self._create_project(request)
        body = h("h1", "Create blank project") + form(
            "/projects/new",
            textbox("name", "Project name")
            + textarea("description", "Project description (optional)")
            + select("visibility", "Visibility Level", [(v, v) for v in VISIBILITIES], "Private")
            + button("Create project"),
            "post",
        )
        return self.page(request, "New project", body)

    def _create_project(self, request: Request) -> Response:
        name, description = request.field("name"), request.field("description")
        visibility = request.field("visibility")
        path = slug(name)
        namespace = self.db.execute(
            "SELECT id, path FROM namespaces WHERE kind = 'user' AND owner_id = ?",
            (request.user_id,),
        ).fetchone()
        problem = ""
        if not _PATH.fullmatch(path) or len(name) > MAX_TITLE:
            problem = "The project name must have letters or digits (at most 255 characters)."
        elif visibility not in VISIBILITIES:
            problem = "Choose a visibility level."
        elif len(description) > MAX_TEXT:
            problem = "The description is too long."
        elif namespace is None:
            problem = "You have no namespace to create projects in."
        elif self.db.execute(
            "SELECT 1 FROM projects WHERE namespace_id = ? AND path = ?", (namespace[0], path)
        ).fetchone():
            problem = f"The project {namespace[1]}/{path} already exists."
        if problem:
            self.flash(request, problem)
            return Response.redirect("/projects/new")
        cursor = self.db.execute(
            "INSERT INTO projects (namespace_id, path, description, visibility, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (namespace[0], path, description, visibility, GITLAB_TODAY, GITLAB_TODAY),
        )
        self.db.execute(
            "INSERT INTO members VALUES (?, ?, 'Owner')", (cursor.lastrowid, request.user_id)
        )
        self.flash(request, f"Project '{name}' was successfully created.")
        return Response.redirect(f"/{namespace[1]}/{path}")

    # ------------------------------------------------------------------ sign in
    @route("/users/sign_in", methods=("GET", "POST"))
    def login(self, request: Request) -> Response:
        return self.sign_in(
            request,
            heading="Sign in",
            field="username",
            label="Username or email",
            lookup="SELECT id, password_hash FROM users WHERE username = ?",
            landing="/",
            submit="Sign in",
            refused="Invalid login or password.",
            match_case=True,
        )

    @route("/users/sign_out")
    def logout(self, request: Request) -> Response:
        self.log_out(request)
        return Response.redirect("/users/sign_in")

    # ------------------------------------------------------------------ namespaces
    @route("/<namespace>")
    def namespace(self, request: Request, namespace: str) -> Response:
        row = self.row("SELECT * FROM namespaces WHERE path = ?", namespace)
        rows = self.db.execute(
            f"{_PROJECTS} WHERE p.namespace_id = ? ORDER BY full_path", (row["id"],)
        ).fetchall()
        kind = "Group" if row["kind"] == "group" else "User"
        body = h("h1", esc(row["name"])) + h("p", esc(f"{kind} · @{row['path']}"))
        body += h("h2", "Projects") + self._project_table(rows)
        return self.page(request, row["name"], body)

    # ------------------------------------------------------------------ project
    @route("/<namespace>/<project>")
    def project(self, request: Request, namespace: str, project: str) -> Response:
        p = self._project(namespace, project)
        counts = dict(
            self.db.execute(
                "SELECT 'issues', count(*) FROM issues WHERE project_id = ? AND state = 'opened' "
                "UNION ALL SELECT 'mrs', count(*) FROM merge_requests WHERE project_id = ? "
                "AND state = 'opened'",
                (p["id"], p["id"]),
            ).fetchall()
        )
        starred = self.db.execute(
            "SELECT 1 FROM stars WHERE user_id = ? AND project_id = ?", (request.user_id, p["id"])
        ).fetchone()
        body = h("h1", esc(p["full_path"])) + h("p", esc(p["description"]))
        body += h("p", esc(f"Visibility: {p['visibility']} · Created on {p['created_at']}"))
        body += h("p", esc(f"Stars: {p['stars']}"))
        body += form(f"/{p['full_path']}/star", button("Unstar" if starred else "Star"), "post")
        body += h("p", esc(f"Open issues: {counts['issues']}"))
        body += h("p", esc(f"Open merge requests: {counts['mrs']}"))
        return self._project_page(request, p, "Project overview", body)

    @route("/<namespace>/<project>/star", methods=("POST",))
    def star(self, request: Request, namespace: str, project: str) -> Response:
        p = self._project(namespace, project)
        removed = self.db.execute(
            "DELETE FROM stars WHERE user_id = ? AND project_id = ?", (request.user_id, p["id"])
        ).rowcount
        if not removed:
            self.db.execute("INSERT INTO stars VALUES (?, ?)", (request.user_id, p["id"]))
        self.flash(request, f"You {'unstarred' if removed else 'starred'} {p['full_path']}.")
        return Response.redirect(f"/{p['full_path']}")

    # ------------------------------------------------------------------ issue and MR lists
    @route("/<namespace>/<project>/-/issues")
    def issues(self, request: Request, namespace: str, project: str) -> Response:
        return self._list(request, self._project(namespace, project), "issues")

    @route("/<namespace>/<project>/-/merge_requests")
    def merge_requests(self, request: Request, namespace: str, project: str) -> Response:
        return self._list(request, self._project(namespace, project), "merge_requests")

    def _list(self, request: Request, p: dict[str, Any], kind: str) -> Response:
        is_issues = kind == "issues"
        states = ISSUE_STATES if is_issues else MR_STATES
        state = request.arg("state", "opened")
        if state not in dict(states):
            state = "opened"
        sort = request.arg("sort", "created_date")
        if sort not in ISSUE_SORTS:
            sort = "created_date"
        conditions, params = ["i.project_id = ?"], [p["id"]]
        search = request.search_arg("search")
        if search:
            conditions.append("i.title LIKE ? ESCAPE '\\'")
            params.append(f"%{_like(search)}%")
        author, assignee = request.arg("author_username"), request.arg("assignee_username")
        if author:
            conditions.append("i.author_id = ?")
            params.append(self._user_id(author) or 0)
        if assignee == "None":
            conditions.append("i.assignee_id IS NULL")
        elif assignee:
            conditions.append("i.assignee_id = ?")
            params.append(self._user_id(assignee) or 0)
        label = request.arg("label_name") if is_issues else ""
        if label:
            conditions.append(
                "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id "
                "WHERE il.issue_id = i.id AND l.name = ?)"
            )
            params.append(label)
        milestone = request.arg("milestone_title") if is_issues else ""
        if milestone:
            conditions.append(
                "i.milestone_id IN (SELECT id FROM milestones WHERE project_id = ? AND title = ?)"
            )
            params.extend((p["id"], milestone))
        where = " AND ".join(conditions)
        counts = dict.fromkeys(dict(states), 0)
        for status, count in self.db.execute(
            f"SELECT i.state, count(*) FROM {kind} i WHERE {where} GROUP BY i.state", params
        ).fetchall():
            counts[status] = count
        counts["all"] = sum(counts[key] for key, _ in states if key != "all")
        if state != "all":
            where += " AND i.state = ?"
            params.append(state)
        total = counts[state]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"SELECT i.id, i.iid, i.title, i.created_at, a.name, b.name, i.state FROM {kind} i "
            "JOIN users a ON a.id = i.author_id LEFT JOIN users b ON b.id = i.assignee_id "
            f"WHERE {where} ORDER BY {ISSUE_SORTS[sort][1]} LIMIT ? OFFSET ?",
            (*params, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        labels = self._labels_of([row[0] for row in rows]) if is_issues else {}
        filters = {
            "search": search,
            "author_username": author,
            "assignee_username": assignee,
            "label_name": label,
            "milestone_title": milestone,
            "sort": sort,
        }
        kept = {key: value for key, value in filters.items() if value}
        base = f"/{p['full_path']}/-/{kind}"
        title = "Issues" if is_issues else "Merge requests"
        body = h("h1", title) + self._state_tabs(base, kept, states, state, counts)
        body += self._filters(p, base, state, filters, is_issues)
        if is_issues:
            body += link(f"/{p['full_path']}/-/issues/new", "New issue")
        body += h("p", esc(f"{total} {title.lower()}"))
        mark = "#" if is_issues else "!"
        items = []
        for issue_id, iid, item_title, created, author, assignee, status in rows:
            details = f"{mark}{iid} · opened on {created[:10]} by {author}"
            extra = [f"Assignee: {assignee}"] if assignee else []
            if labels.get(issue_id):
                extra.append(f"Labels: {', '.join(labels[issue_id])}")
            if state == "all":
                extra.append(status.title())
            items.append(
                h(
                    "li",
                    link(f"{base}/{iid}", item_title)
                    + h("p", esc(details))
                    + (h("p", esc(" · ".join(extra))) if extra else ""),
                )
            )
        body += h("ul", "".join(items), aria_label=title)
        body += pager(base, {**kept, "state": state}, page, pages)
        return self._project_page(request, p, title, body)

    def _filters(
        self, p: dict[str, Any], base: str, state: str, filters: dict[str, str], issues: bool
    ) -> str:
        members = self._members(p["id"])
        people = [("", "Any")] + [(username, name) for username, name in members]
        inner = (
            hidden("state", state)
            + textbox("search", "Search or filter results...", filters["search"])
            + select("author_username", "Author", people, filters["author_username"])
            + select(
                "assignee_username",
                "Assignee",
                [*people[:1], ("None", "None"), *people[1:]],
                filters["assignee_username"],
            )
        )
        if issues:
            labels = self.db.execute(
                "SELECT name FROM labels WHERE project_id = ? ORDER BY name", (p["id"],)
            ).fetchall()
            milestones = self.db.execute(
                "SELECT title FROM milestones WHERE project_id = ? ORDER BY title", (p["id"],)
            ).fetchall()
            inner += select(
                "label_name",
                "Label",
                [("", "Any")] + [(n, n) for (n,) in labels],
                filters["label_name"],
            )
            inner += select(
                "milestone_title",
                "Milestone",
                [("", "Any")] + [(t, t) for (t,) in milestones],
                filters["milestone_title"],
            )
        inner += select(
            "sort", "Sort by", [(k, v[0]) for k, v in ISSUE_SORTS.items()], filters["sort"]
        )
        return form(base, button("Filter results") + inner)

    def _labels_of(self, issue_ids: list[int]) -> dict[int, list[str]]:
        if not issue_ids:
            return {}
        found: dict[int, list[str]] = {}
        for issue_id, name in self.db.execute(
            "SELECT il.issue_id, l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id "
            f"WHERE il.issue_id IN ({','.join('?' * len(issue_ids))}) ORDER BY l.name",
            issue_ids,
        ).fetchall():
            found.setdefault(issue_id, []).append(name)
        return found

    # ------------------------------------------------------------------ issues
    def _issue(self, p: dict[str, Any], iid: int) -> dict[str, Any]:
        return self.row(
            "SELECT i.*, a.name AS author, a.username AS author_username, b.name AS assignee, "
            "m.title AS milestone FROM issues i JOIN users a ON a.id = i.author_id "
            "LEFT JOIN users b ON b.id = i.assignee_id LEFT JOIN milestones m ON "
            "m.id = i.milestone_id WHERE i.project_id = ? AND i.iid = ?",
            p["id"],
            iid,
        )

    @route("/<namespace>/<project>/-/issues/new", methods=("GET", "POST"))
    def new_issue(self, request: Request, namespace: str, project: str) -> Response:
        p = self._project(namespace, project)
        if request.method == "POST":
            return self._create_issue(request, p)
        body = h("h1", "New issue") + form(
            f"/{p['full_path']}/-/issues/new",
            textbox("title", "Title")
            + textarea("description", "Description")
            + self._issue_fields(p, "", "", "Label")
            + button("Create issue"),
            "post",
        )
        return self._project_page(request, p, "New issue", body)

    def _issue_fields(self, p: dict[str, Any], assignee: str, milestone: str, label: str) -> str:
        members = self._members(p["id"])
        milestones = self.db.execute(
            "SELECT title FROM milestones WHERE project_id = ? ORDER BY title", (p["id"],)
        ).fetchall()
        labels = self.db.execute(
            "SELECT name FROM labels WHERE project_id = ? ORDER BY name", (p["id"],)
        ).fetchall()
        return (
            select("assignee", "Assignee", [("", "Unassigned"), *members], assignee)
            + select(
                "milestone",
                "Milestone",
                [("", "No milestone")] + [(t, t) for (t,) in milestones],
                milestone,
            )
            + select("label", label, [("", "No label")] + [(n, n) for (n,) in labels])
        )

    def _validated_fields(
        self, request: Request, p: dict[str, Any]
    ) -> tuple[int | None, int | None, int | None] | str:
        """The assignee, milestone and label ids of an issue form, or what is wrong."""
        assignee = request.field("assignee")
        assignee_id = None
        if assignee:
            row = self.db.execute(
                "SELECT m.user_id FROM members m JOIN users u ON u.id = m.user_id "
                "WHERE m.project_id = ? AND u.username = ?",
                (p["id"], assignee),
            ).fetchone()
            if row is None:
                return "The assignee must be a member of the project."
            assignee_id = row[0]
        milestone_id = label_id = None
        if request.field("milestone"):
            row = self.db.execute(
                "SELECT id FROM milestones WHERE project_id = ? AND title = ?",
                (p["id"], request.field("milestone")),
            ).fetchone()
            if row is None:
                return "There is no such milestone."
            milestone_id = row[0]
        if request.field("label"):
            row = self.db.execute(
                "SELECT id FROM labels WHERE project_id = ? AND name = ?",
                (p["id"], request.field("label")),
            ).fetchone()
            if row is None:
                return "There is no such label."
            label_id = row[0]
        return assignee_id, milestone_id, label_id

    def _create_issue(self, request: Request, p: dict[str, Any]) -> Response:
        title, description = request.field("title"), request.field("description")
        fields = self._validated_fields(request, p)
        if isinstance(fields, str) or not title or len(title) > MAX_TITLE:
            problem = fields if isinstance(fields, str) else "The title needs 1 to 255 characters."
            self.flash(request, problem)
            return Response.redirect(f"/{p['full_path']}/-/issues/new")
        if len(description) > MAX_TEXT:
            self.flash(request, "The description is too long.")
            return Response.redirect(f"/{p['full_path']}/-/issues/new")
        assignee_id, milestone_id, label_id = fields
        iid = self.db.execute(
            "SELECT coalesce(max(iid), 0) + 1 FROM issues WHERE project_id = ?", (p["id"],)
        ).fetchone()[0]
        stamp = GITLAB_NOW
        cursor = self.db.execute(
            "INSERT INTO issues (project_id, iid, title, description, author_id, assignee_id, "
            "milestone_id, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
            "'opened', ?, ?)",
            (
                p["id"],
                iid,
                title,
                description,
                request.user_id,
                assignee_id,
                milestone_id,
                stamp,
                stamp,
            ),
        )
        if label_id:
            self.db.execute("INSERT INTO issue_labels VALUES (?, ?)", (cursor.lastrowid, label_id))
        self.flash(request, "The issue was created.")
        return Response.redirect(f"/{p['full_path']}/-/issues/{iid}")

    @route("/<namespace>/<project>/-/issues/<int:iid>")
    def issue(self, request: Request, namespace: str, project: str, iid: int) -> Response:
        p = self._project(namespace, project)
        issue = self._issue(p, iid)
        base = f"/{p['full_path']}/-/issues/{iid}"
        labels = self._labels_of([issue["id"]]).get(issue["id"], [])
        notes = self.db.execute(
            "SELECT u.name, u.username, n.body, n.created_at FROM notes n JOIN users u ON "
            "u.id = n.author_id WHERE n.issue_id = ? ORDER BY n.id",
            (issue["id"],),
        ).fetchall()
        body = h("h1", esc(issue["title"]))
        body += h("p", esc(f"Status: {'Open' if issue['state'] == 'opened' else 'Closed'}"))
        body += h(
            "p",
            esc(f"Issue #{iid} created on {issue['created_at'][:10]} by ")
            + link(f"/{issue['author_username']}", issue["author"]),
        )
        body += h("p", esc(issue["description"]))
        body += h("p", esc(f"Assignee: {issue['assignee'] or 'None'}"))
        body += h("p", esc(f"Milestone: {issue['milestone'] or 'None'}"))
        body += h("p", esc(f"Labels: {', '.join(labels) or 'None'}"))
        close = "Close issue" if issue["state"] == "opened" else "Reopen issue"
        body += form(f"{base}/state", button(close), "post")
        assignee = self.db.execute(
            "SELECT username FROM users WHERE id = ?", (issue["assignee_id"],)
        ).fetchone()
        body += h("h2", "Edit issue") + form(
            f"{base}/update",
            button("Save changes")
            + self._issue_fields(
                p, assignee[0] if assignee else "", issue["milestone"] or "", "Add label"
            ),
            "post",
        )
        body += h("h2", f"Activity ({len(notes)} comments)")
        body += h(
            "ul",
            "".join(
                h("li", link(f"/{username}", name) + esc(f" · {created[:10]}") + h("p", esc(text)))
                for name, username, text, created in notes
            ),
            aria_label="Comments",
        )
        body += form(f"{base}/notes", textarea("body", "Comment") + button("Comment"), "post")
        return self._project_page(request, p, issue["title"], body)

    @route("/<namespace>/<project>/-/issues/<int:iid>/state", methods=("POST",))
    def issue_state(self, request: Request, namespace: str, project: str, iid: int) -> Response:
        p = self._project(namespace, project)
        issue = self._issue(p, iid)
        state = "closed" if issue["state"] == "opened" else "opened"
        self.db.execute(
            "UPDATE issues SET state = ?, updated_at = ? WHERE id = ?",
            (state, GITLAB_NOW, issue["id"]),
        )
        self.flash(request, f"The issue was {'closed' if state == 'closed' else 'reopened'}.")
        return Response.redirect(f"/{p['full_path']}/-/issues/{iid}")

    @route("/<namespace>/<project>/-/issues/<int:iid>/update", methods=("POST",))
    def issue_update(self, request: Request, namespace: str, project: str, iid: int) -> Response:
        p = self._project(namespace, project)
        issue = self._issue(p, iid)
        fields = self._validated_fields(request, p)
        if isinstance(fields, str):
            self.flash(request, fields)
            return Response.redirect(f"/{p['full_path']}/-/issues/{iid}")
        assignee_id, milestone_id, label_id = fields
        self.db.execute(
            "UPDATE issues SET assignee_id = ?, milestone_id = ?, updated_at = ? WHERE id = ?",
            (assignee_id, milestone_id, GITLAB_NOW, issue["id"]),
        )
        if label_id:
            self.db.execute(
                "INSERT OR IGNORE INTO issue_labels VALUES (?, ?)", (issue["id"], label_id)
            )
        self.flash(request, "The issue was updated.")
        return Response.redirect(f"/{p['full_path']}/-/issues/{iid}")

    @route("/<namespace>/<project>/-/issues/<int:iid>/notes", methods=("POST",))
    def issue_note(self, request: Request, namespace: str, project: str, iid: int) -> Response:
        p = self._project(namespace, project)
        issue = self._issue(p, iid)
        text = request.field("body")
        if not text or len(text) > MAX_TEXT:
            self.flash(request, f"A comment needs 1 to {MAX_TEXT:,} characters.")
        else:
            self.db.execute(
                "INSERT INTO notes (issue_id, author_id, body, created_at) VALUES (?, ?, ?, ?)",
                (issue["id"], request.user_id, text, GITLAB_NOW),
            )
            self.flash(request, "Your comment was added.")
        return Response.redirect(f"/{p['full_path']}/-/issues/{iid}")

    # ------------------------------------------------------------------ merge requests
    @route("/<namespace>/<project>/-/merge_requests/<int:iid>")
    def merge_request(self, request: Request, namespace: str, project: str, iid: int) -> Response:
        p = self._project(namespace, project)
        mr = self.row(
            "SELECT r.*, a.name AS author, a.username AS author_username, b.name AS assignee "
            "FROM merge_requests r JOIN users a ON a.id = r.author_id LEFT JOIN users b ON "
            "b.id = r.assignee_id WHERE r.project_id = ? AND r.iid = ?",
            p["id"],
            iid,
        )
        base = f"/{p['full_path']}/-/merge_requests/{iid}"
        body = h("h1", esc(mr["title"])) + h("p", esc(f"Status: {mr['state'].title()}"))
        body += h(
            "p",
            esc(f"Merge request !{iid} created on {mr['created_at'][:10]} by ")
            + link(f"/{mr['author_username']}", mr["author"]),
        )
        body += h("p", esc(f"Source branch: {mr['source_branch']}"))
        body += h("p", esc(f"Target branch: {mr['target_branch']}"))
        body += h("p", esc(f"Assignee: {mr['assignee'] or 'None'}"))
        body += h("p", esc(mr["description"]))
        if mr["state"] == "opened":
            body += form(
                f"{base}/state",
                button("Merge", "action", "merge")
                + button("Close merge request", "action", "close"),
                "post",
            )
        return self._project_page(request, p, mr["title"], body)

    @route("/<namespace>/<project>/-/merge_requests/<int:iid>/state", methods=("POST",))
    def merge_request_state(
        self, request: Request, namespace: str, project: str, iid: int
    ) -> Response:
        p = self._project(namespace, project)
        mr = self.row(
            "SELECT id, state FROM merge_requests WHERE project_id = ? AND iid = ?", p["id"], iid
        )
        action = request.field("action")
        states = {"merge": "merged", "close": "closed"}
        if mr["state"] != "opened" or action not in states:
            self.flash(request, "Only an open merge request can be merged or closed.")
        else:
            self.db.execute(
                "UPDATE merge_requests SET state = ? WHERE id = ?", (states[action], mr["id"])
            )
            self.flash(request, f"The merge request was {states[action]}.")
        return Response.redirect(f"/{p['full_path']}/-/merge_requests/{iid}")

    # ------------------------------------------------------------------ members, labels
    @route("/<namespace>/<project>/-/project_members", methods=("GET", "POST"))
    def members(self, request: Request, namespace: str, project: str) -> Response:
        p = self._project(namespace, project)
        if request.method == "POST":
            return self._invite(request, p)
        rows = self.db.execute(
            "SELECT u.name, u.username, m.role FROM members m JOIN users u ON u.id = m.user_id "
            "WHERE m.project_id = ? ORDER BY u.name",
            (p["id"],),
        ).fetchall()
        body = h("h1", "Project members") + form(
            f"/{p['full_path']}/-/project_members",
            textbox("username", "Username")
            + select("role", "Select a role", [(r, r) for r in ROLES[:4]], "Guest")
            + button("Invite"),
            "post",
        )
        body += h("p", esc(f"{len(rows)} members"))
        body += table(
            ("Name", "Username", "Role"),
            [[link(f"/{u}", name), esc(f"@{u}"), esc(role)] for name, u, role in rows],
        )
        return self._project_page(request, p, "Members", body)

    def _invite(self, request: Request, p: dict[str, Any]) -> Response:
        username = request.field("username").removeprefix("@")
        role = request.field("role")
        user_id = self._user_id(username)
        target = f"/{p['full_path']}/-/project_members"
        if user_id is None:
            self.flash(request, f"There is no user '{username[:100]}'.")
        elif role not in ROLES[:4]:
            self.flash(request, "Choose a role.")
        elif self.db.execute(
            "SELECT 1 FROM members WHERE project_id = ? AND user_id = ?", (p["id"], user_id)
        ).fetchone():
            self.flash(request, f"{username} is already a member of this project.")
        else:
            self.db.execute("INSERT INTO members VALUES (?, ?, ?)", (p["id"], user_id, role))
            self.flash(request, f"{username} was added to the project as {role}.")
        return Response.redirect(target)

    @route("/<namespace>/<project>/-/labels")
    def labels(self, request: Request, namespace: str, project: str) -> Response:
        p = self._project(namespace, project)
        rows = self.db.execute(
            "SELECT l.name, (SELECT count(*) FROM issue_labels il JOIN issues i ON i.id = "
            "il.issue_id WHERE il.label_id = l.id AND i.state = 'opened') FROM labels l "
            "WHERE l.project_id = ? ORDER BY l.name",
            (p["id"],),
        ).fetchall()
        base = f"/{p['full_path']}/-/issues"
        body = h("h1", "Labels") + table(
            ("Label", "Open issues"),
            [
                [link(f"{base}?{_query({'label_name': name})}", name), esc(count)]
                for name, count in rows
            ],
        )
        return self._project_page(request, p, "Labels", body)

    @route("/<namespace>/<project>/-/milestones")
    def milestones(self, request: Request, namespace: str, project: str) -> Response:
        p = self._project(namespace, project)
        rows = self.db.execute(
            "SELECT m.title, m.due_date, m.state, "
            "(SELECT count(*) FROM issues i WHERE i.milestone_id = m.id AND i.state = 'opened'), "
            "(SELECT count(*) FROM issues i WHERE i.milestone_id = m.id AND i.state = 'closed') "
            "FROM milestones m WHERE m.project_id = ? ORDER BY m.due_date",
            (p["id"],),
        ).fetchall()
        base = f"/{p['full_path']}/-/issues"
        body = h("h1", "Milestones") + table(
            ("Milestone", "Due date", "State", "Open issues", "Closed issues"),
            [
                [
                    link(f"{base}?{_query({'milestone_title': title})}", title),
                    esc(due),
                    esc(state.title()),
                    esc(opened),
                    esc(closed),
                ]
                for title, due, state, opened, closed in rows
            ],
        )
        return self._project_page(request, p, "Milestones", body)


def _like(text: str) -> str:
    """``text`` for a ``LIKE`` pattern with ``ESCAPE '\\'`` (its ``%`` and ``_`` literal)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _query(params: dict[str, str]) -> str:
    """A query string of the non-empty ``params``."""
    return urlencode({key: value for key, value in params.items() if value})
