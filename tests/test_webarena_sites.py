"""WebArena's forum, code-hosting and wiki sites: pages render, hostile input answers a message,
and every template of theirs is solved by its oracle, which never reads the answer key."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlencode
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx
import pytest

from llmgym.envs.webarena.axtree import parse_page
from llmgym.envs.webarena.env import START_COOKIES, WebArenaEnv, instances
from llmgym.envs.webarena.forum_data import FORUM_PASSWORD, FORUM_SESSION, FORUM_USER, ForumData
from llmgym.envs.webarena.gitlab_data import (
    GITLAB_PASSWORD,
    GITLAB_SESSION,
    GITLAB_USER,
    GitlabData,
)
from llmgym.envs.webarena.sites import Web
from llmgym.envs.webarena.tasks import (
    Instance,
    ProgramCheck,
    StringMatch,
    UrlMatch,
    templates,
)
from llmgym.envs.webarena.web import Response, Site, wsgi_environ
from llmgym.envs.webarena.wiki_data import WikiData

SITES = ("forum", "gitlab", "wiki")
MY_TEMPLATES = [t.id for t in templates() if t.id.split("/")[0] in SITES]


@pytest.fixture(scope="module")
def env() -> WebArenaEnv:
    return WebArenaEnv()


@pytest.fixture(scope="module")
def web() -> Web:
    return Web(0)


def _request(
    site: Site, method: str, path: str, data: dict[str, str] | None = None, cookie: str = ""
) -> Response:
    path, _, query = path.partition("?")
    body = urlencode(data or {}).encode()
    return site.handle(wsgi_environ(method, path, query, body, f"localhost:{site.port}", cookie))


def _forum(web: Web) -> Site:
    return web.site_at("localhost:9999")


def _gitlab(web: Web) -> Site:
    return web.site_at("localhost:8023")


FORUM_COOKIE = f"forum_sid={FORUM_SESSION}"
GITLAB_COOKIE = f"gitlab_sid={GITLAB_SESSION}"


# ---------------------------------------------------------------------------- data
def test_the_data_is_large_and_its_sessions_match_the_start_cookies(web: Web) -> None:
    forum, gitlab = web.connection(ForumData), web.connection(GitlabData)
    count = {
        table: forum.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("posts", "comments", "users", "forums")
    }
    assert count["posts"] >= 4_000 and count["comments"] >= 10_000 and count["forums"] >= 30
    assert gitlab.execute("SELECT count(*) FROM issues").fetchone()[0] >= 5_000
    assert gitlab.execute("SELECT count(*) FROM merge_requests").fetchone()[0] >= 1_000
    threaded = forum.execute("SELECT count(*) FROM comments WHERE parent_id IS NOT NULL")
    assert threaded.fetchone()[0] > 1_000
    assert START_COOKIES["localhost:9999"] == {"forum_sid": FORUM_SESSION}
    assert START_COOKIES["localhost:8023"] == {"gitlab_sid": GITLAB_SESSION}
    wiki = web.connection(WikiData)
    assert wiki.execute("SELECT count(*) FROM articles").fetchone()[0] >= 2_500
    assert wiki.execute("SELECT count(*) FROM sections").fetchone()[0] >= 5_000


@pytest.mark.slow
@pytest.mark.parametrize("dataset", [ForumData, GitlabData, WikiData])
def test_the_data_is_a_function_of_the_seed(dataset: type) -> None:
    def dump(seed: int) -> list[str]:
        db = sqlite3.connect(":memory:")
        db.executescript("CREATE TABLE sessions (sid, site, user_id, flash DEFAULT '');")
        dataset().build(db, seed)
        return list(db.iterdump())

    first = dump(3)
    assert dump(3) == first
    assert dump(4) != first


# ---------------------------------------------------------------------------- pages
FORUM_PAGES = (
    "/",
    "/all?sort=top",
    "/all?sort=new&page=3",
    "/forums",
    "/f/books",
    "/f/books?sort=top&page=2",
    "/f/gardening/submit_nothing",
    "/search?q=best+beginner",
    "/search?q=%22%2A+NEAR+OR",
    "/user/MarvelsGrantMan136",
    "/user/MarvelsGrantMan136/comments",
    "/user/MarvelsGrantMan136/edit_biography",
    "/submit?forum=books",
    "/login",
)
GITLAB_PAGES = (
    "/",
    "/dashboard/projects/starred",
    "/dashboard/issues?state=closed",
    "/dashboard/merge_requests?state=all",
    "/explore/projects?sort=stars_desc",
    "/explore/projects?name=%25_&page=2",
    "/search?search=parser&scope=projects",
    "/search?search=crash&scope=issues",
    "/search?search=Bump&scope=merge_requests",
    "/projects/new",
    "/byteblaze",
    "/openkit",
)


def _gitlab_project_pages(web: Web) -> list[str]:
    path = (
        web.connection(GitlabData)
        .execute(
            "SELECT n.path || '/' || p.path FROM projects p JOIN namespaces n "
            "ON n.id = p.namespace_id ORDER BY p.id LIMIT 1"
        )
        .fetchone()[0]
    )
    return [
        f"/{path}",
        f"/{path}/-/issues?state=all&sort=title_asc",
        f"/{path}/-/issues?label_name=bug&assignee_username=None",
        f"/{path}/-/issues/1",
        f"/{path}/-/issues/new",
        f"/{path}/-/merge_requests?state=merged",
        f"/{path}/-/project_members",
        f"/{path}/-/labels",
        f"/{path}/-/milestones",
    ]


def _post_url(web: Web) -> str:
    post_id, forum = (
        web.connection(ForumData)
        .execute(
            "SELECT p.id, f.name FROM posts p JOIN forums f ON f.id = p.forum_id "
            "ORDER BY p.comment_count DESC, p.id LIMIT 1"
        )
        .fetchone()
    )
    return f"/f/{forum}/{post_id}"


def test_every_page_renders_with_a_heading_and_unknown_pages_answer_404(web: Web) -> None:
    forum, gitlab = _forum(web), _gitlab(web)
    post = _post_url(web)
    comment = web.connection(ForumData).execute(
        "SELECT id FROM comments WHERE post_id = ? ORDER BY id LIMIT 1", (int(post.split("/")[-1]),)
    )
    pages = [(forum, FORUM_COOKIE, p) for p in FORUM_PAGES if "nothing" not in p]
    pages += [
        (forum, FORUM_COOKIE, post),
        (forum, FORUM_COOKIE, f"{post}/comment/{comment.fetchone()[0]}"),
    ]
    pages += [(gitlab, GITLAB_COOKIE, p) for p in (*GITLAB_PAGES, *_gitlab_project_pages(web))]
    for site, cookie, path in pages:
        response = _request(site, "GET", path, cookie=cookie)
        assert response.status == 200, (path, response.status, response.body[:300])
        tree = parse_page(response.body)
        assert any(node.role == "heading" for node in tree.nodes), path
        assert "<script" not in response.body
    assert _request(forum, "GET", "/f/books/submit_nothing", cookie=FORUM_COOKIE).status == 404
    assert _request(forum, "GET", "/f/no-such-forum").status == 404
    assert _request(gitlab, "GET", "/nobody/nothing", cookie=GITLAB_COOKIE).status == 404
    assert _request(gitlab, "GET", "/").headers == [("Location", "/users/sign_in")]


def test_wiki_pages_render_links_and_search_survives_any_pattern(web: Web) -> None:
    wiki = web.site_at("localhost:8888")
    slug, title = (
        web.connection(WikiData)
        .execute("SELECT slug, title FROM articles WHERE kind = 'city' ORDER BY id LIMIT 1")
        .fetchone()
    )
    article = parse_page(_request(wiki, "GET", f"/wiki/{slug}").body)
    links = [n.name for n in article.nodes if n.role == "link"]
    assert any(n.role == "heading" and n.name == title for n in article.nodes)
    assert "History" in links and len(links) >= 4
    for path in ("/", "/category/Rivers?page=2", "/category/Countries", f"/search?pattern={title}"):
        response = _request(wiki, "GET", path)
        assert response.status == 200, path
    assert title in _request(wiki, "GET", f"/search?pattern={title}").body
    for text in HOSTILE_TEXT:
        url = f"/search?{urlencode({'pattern': text, 'page': text})}"
        assert _request(wiki, "GET", url).status == 200
    assert _request(wiki, "GET", "/wiki/No_such_article").status == 404
    assert _request(wiki, "POST", "/search").status == 405


def test_listings_sort_and_paginate(web: Web) -> None:
    forum = _forum(web)
    top = parse_page(_request(forum, "GET", "/f/books?sort=top").body)
    scores = [
        int(n.name.split()[1])
        for n in top.nodes
        if n.role == "StaticText" and n.name.startswith("Score: ")
    ]
    assert len(scores) == 20 and scores == sorted(scores, reverse=True)
    second = _request(forum, "GET", "/f/books?sort=top&page=2").body
    assert "Page 2 of" in second and "Previous" in second
    newest = _request(forum, "GET", "/all?sort=new").body
    dates = re.findall(r"submitted on (\d{4}-\d\d-\d\d)", newest)
    assert dates == sorted(dates, reverse=True)


# ---------------------------------------------------------------------------- hostile input
HOSTILE_TEXT = ("", " ", "x" * 20_000, "'; DROP TABLE posts; --", '"*NEAR(', "\u202e\x00é漢字?")


def _flash_after(site: Site, response: Response, cookie: str) -> str:
    assert response.status in (303, 403, 404), (response.status, response.body[:300])
    if response.status != 303:
        return "error page"
    location = dict(response.headers)["Location"]
    page = _request(site, "GET", location, cookie=cookie)
    assert page.status in (200, 404), (location, page.status)
    found = re.search(r'<div class="flash">(.*?)</div>', page.body)
    return found.group(1) if found else ""


def test_hostile_forum_forms_answer_a_message_never_a_500(web: Web) -> None:
    forum = _forum(web)
    post = _post_url(web)
    for text in HOSTILE_TEXT:
        forms = [
            ("/submit", {"forum": "books", "title": text, "body": text}),
            ("/submit", {"forum": text, "title": "A title", "body": "b"}),
            (f"{post}/comment", {"body": text}),
            (f"{post}/vote", {"choice": text}),
            ("/user/MarvelsGrantMan136/edit_biography", {"biography": text * 2}),
            ("/login", {"username": text, "password": text}),
        ]
        for path, data in forms:
            response = _request(forum, "POST", path, data, FORUM_COOKIE)
            if path == "/login":
                assert response.status == 200 and "Invalid username" in response.body
                continue
            if path.endswith("edit_biography") and len(text * 2) <= 1_000:
                continue  # a short biography is a valid one
            assert _flash_after(forum, response, FORUM_COOKIE), (path, text[:20])
        assert _request(forum, "GET", f"/search?{urlencode({'q': text})}").status == 200
    assert _request(
        forum, "POST", "/user/SomeoneElse1/edit_biography", {}, FORUM_COOKIE
    ).status in (
        403,
        404,
    )
    assert _request(forum, "POST", "/submit", {"title": "x"}).headers == [("Location", "/login")]


def test_hostile_gitlab_forms_answer_a_message_never_a_500(web: Web) -> None:
    gitlab = _gitlab(web)
    project = _gitlab_project_pages(web)[0]
    for text in HOSTILE_TEXT:
        forms = [
            (f"{project}/-/issues/new", {"title": text, "description": text, "label": text}),
            (f"{project}/-/issues/new", {"title": "ok", "assignee": text}),
            (f"{project}/-/issues/1/update", {"assignee": text, "milestone": text}),
            (f"{project}/-/issues/1/notes", {"body": text}),
            (f"{project}/-/merge_requests/1/state", {"action": text}),
            (f"{project}/-/project_members", {"username": text, "role": text}),
            ("/projects/new", {"name": text, "visibility": text}),
        ]
        for path, data in forms:
            response = _request(gitlab, "POST", path, data, GITLAB_COOKIE)
            message = _flash_after(gitlab, response, GITLAB_COOKIE)
            assert message, (path, text[:20])
        for query in ("search", "name"):
            url = f"/explore/projects?{urlencode({query: text})}"
            assert _request(gitlab, "GET", url, cookie=GITLAB_COOKIE).status == 200
        issues = f"{project}/-/issues?{urlencode({'search': text, 'label_name': text})}"
        assert _request(gitlab, "GET", issues, cookie=GITLAB_COOKIE).status == 200
    web.reset()


# ---------------------------------------------------------------------------- real HTTP
class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _served(site: Site) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, site, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_sites_answer_a_real_http_client_with_sign_in_and_sessions() -> None:
    web = Web(0)
    with _served(_forum(web)) as forum, httpx.Client(base_url=forum) as client:
        assert "All forums" in client.get("/").text
        assert client.post("/submit", data={"title": "x"}).headers["location"] == "/login"
        wrong = client.post("/login", data={"username": FORUM_USER, "password": "nope"})
        assert wrong.status_code == 200 and "Invalid username" in wrong.text
        signed = client.post("/login", data={"username": FORUM_USER, "password": FORUM_PASSWORD})
        assert signed.status_code == 303 and "forum_sid" in client.cookies
        post = _post_url(web)
        voted = client.post(f"{post}/vote", data={"choice": "1"})
        assert voted.status_code == 303 and voted.headers["location"] == post
        assert "You upvoted this post." in client.get(post).text
        assert client.get("/f/no-such-forum").status_code == 404
    with _served(_gitlab(web)) as gitlab, httpx.Client(base_url=gitlab) as client:
        assert client.get("/").headers["location"] == "/users/sign_in"
        login = {"username": GITLAB_USER, "password": GITLAB_PASSWORD}
        assert client.post("/users/sign_in", data=login).status_code == 303
        assert "@byteblaze" in client.get("/").text
        assert client.delete("/").status_code == 405
    with _served(web.site_at("localhost:8888")) as wiki, httpx.Client(base_url=wiki) as client:
        assert "Browse by category" in client.get("/").text


# ---------------------------------------------------------------------------- templates
def _by_task_id(env: WebArenaEnv, split: str) -> dict[str, Instance]:
    """The split's instances by task id (``instances`` gives a mapping by task id, or a tuple
    in task-id order)."""
    config = env.config
    chosen = instances(config.data_seed, config.train_per_template, config.eval_per_template)
    listed = chosen[split]
    if isinstance(listed, Mapping):
        return dict(listed)
    return dict(zip(env.task_ids(split), listed, strict=True))


def _mine(instance: Instance) -> bool:
    return instance.template.split("/")[0] in SITES


def test_the_sites_bring_enough_templates_of_every_kind(env: WebArenaEnv) -> None:
    mine = [i for split in ("train", "eval") for i in _by_task_id(env, split).values() if _mine(i)]
    assert len(MY_TEMPLATES) >= 40 and len(mine) >= 1_500
    for site in SITES:
        kinds = {t.kind for t in templates() if t.id.startswith(f"{site}/")}
        # The wiki is read-only, as WebArena's Kiwix is: it has no change tasks.
        wanted = {"information", "navigation"} | (set() if site == "wiki" else {"change"})
        assert kinds == wanted, site


def _play(env: WebArenaEnv, task_id: str, instance: Instance | None = None) -> tuple[list, dict]:
    env.reset(options={"task_id": task_id})
    if instance is not None:
        env._instance = instance
    actions, info = [], {}
    for _ in range(30):
        actions.append(env.oracle_action())
        _, _, terminated, _, info = env.step(actions[-1])
        assert not info["invalid_action"], (task_id, actions[-1])
        if terminated:
            break
    return actions, info


def _forged(instance: Instance) -> Instance:
    forged = []
    for evaluator in instance.evaluators:
        if isinstance(evaluator, StringMatch):
            forged.append(StringMatch(exact="forged answer 4711"))
        elif isinstance(evaluator, UrlMatch):
            forged.append(UrlMatch(f"{instance.start_url}forged"))
        else:
            forged.append(evaluator)
    reference = {
        key: value + 1 if isinstance(value, int) else f"forged {value}"
        for key, value in instance.reference.items()
    }
    return dataclasses.replace(instance, evaluators=tuple(forged), reference=reference)


def _first_task(env: WebArenaEnv, template_id: str) -> str:
    """The template's first eval task (its first train task if the eval split has none)."""
    for split in ("eval", "train"):
        for task_id, instance in _by_task_id(env, split).items():
            if instance.template == template_id:
                return task_id
    raise LookupError(template_id)


@pytest.mark.parametrize("template_id", MY_TEMPLATES)
def test_the_oracle_solves_each_template_and_never_reads_the_answer_key(
    env: WebArenaEnv, template_id: str
) -> None:
    task_id = _first_task(env, template_id)
    actions, info = _play(env, task_id)
    assert info["success"], (task_id, actions, info)
    instance = env.instance
    forged_actions, forged_info = _play(env, task_id, _forged(instance))
    assert forged_actions == actions
    if instance.reference or not any(isinstance(e, ProgramCheck) for e in instance.evaluators):
        assert not forged_info["success"], (task_id, forged_info)


@pytest.mark.slow
def test_the_oracle_solves_at_least_95_percent_of_the_sites_eval_tasks(env: WebArenaEnv) -> None:
    mine = [task_id for task_id, inst in _by_task_id(env, "eval").items() if _mine(inst)]
    solved = sum(_play(env, task_id)[1]["success"] for task_id in mine)
    assert solved >= 0.95 * len(mine), (solved, len(mine))
