"""The forum (WebArena's Postmill "reddit"): forums, posts, threaded comments, votes, users.

Pages: the front page (posts of the forums you subscribe to) and ``/all``, each sortable by
hot, new and top with pages of 20; the forum list; a forum's page (description, subscribers,
Subscribe button, its posts); a post's page (score, Upvote/Downvote, the comment form and the
comment tree, each comment with a Reply link to its own page and reply form); user pages
(submissions, comments, biography, editable for yourself); full-text search over posts; and
the submission form. Sign in at ``/login``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.forum_data import FORUM_TODAY, ForumData, hot_rank
from llmgym.envs.webarena.shop import fts_query
from llmgym.envs.webarena.web import (
    Request,
    Response,
    Site,
    button,
    esc,
    flash_box,
    form,
    h,
    link,
    pager,
    route,
    search_form,
    select,
    table,
    textarea,
    textbox,
)
from llmgym.errors import HttpError

__all__ = ["FORUM_SORTS", "Forum"]

PER_PAGE = 20
FORUM_SORTS = {
    "hot": ("Hot", "p.hot DESC, p.id DESC"),
    "new": ("New", "p.created_at DESC, p.id DESC"),
    "top": ("Top", "p.score DESC, p.id DESC"),
}
"""Listing orders: key -> (link text, SQL order)."""
MAX_TITLE = 300
MAX_BODY = 10_000
_POST_COLUMNS = (
    "p.id, p.title, p.score, p.created_at, p.comment_count, u.username, f.name "
    "FROM posts p JOIN users u ON u.id = p.user_id JOIN forums f ON f.id = p.forum_id"
)


class Forum(Site):
    """The forum at ``localhost:9999`` (see the module docstring)."""

    name = "forum"
    title = "Postmill"
    port = 9999
    dataset: ClassVar[type[Dataset]] = ForumData
    stylesheet = "header form{display:inline;margin-left:20px}ul ul{margin-left:18px}"

    # ------------------------------------------------------------------ layout
    def layout(self, request: Request | None, title: str, body: str) -> str:
        user = self._username(request.user_id) if request and request.user_id else None
        account = (
            link(f"/user/{user}", user) + link("/submit", "Submit") + link("/logout", "Log out")
            if user
            else link("/login", "Log in")
        )
        search = search_form(request, "q", "Search query")
        nav = h(
            "nav",
            link("/", "Home") + link("/all", "All") + link("/forums", "Forums"),
            aria_label="Main",
        )
        flash = flash_box(request)
        header = h("header", link("/", self.title) + account + search)
        return self.document(f"{title} | {self.title}", header + nav + h("main", flash + body))

    def _username(self, user_id: int | None) -> str | None:
        row = self.db.execute("SELECT username FROM users WHERE id = ?", (user_id,)).fetchone()
        return row[0] if row else None

    def _need_login(self, request: Request) -> Response | None:
        return None if request.user_id else Response.redirect("/login")

    # ------------------------------------------------------------------ listings
    def _listing(
        self,
        request: Request,
        title: str,
        where: str,
        params: tuple,
        path: str,
        intro: str = "",
        in_forum: str = "",
    ) -> Response:
        sort = request.arg("sort", "hot")
        if sort not in FORUM_SORTS:
            sort = "hot"
        total = self.db.execute(f"SELECT count(*) FROM posts p WHERE {where}", params).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"SELECT {_POST_COLUMNS} WHERE {where} ORDER BY {FORUM_SORTS[sort][1]} "
            "LIMIT ? OFFSET ?",
            (*params, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        sorts = h(
            "nav",
            " ".join(
                h("strong", link(f"{path}?sort={key}", label))
                if key == sort
                else link(f"{path}?sort={key}", label)
                for key, (label, _) in FORUM_SORTS.items()
            ),
            aria_label="Sort by",
        )
        body = h("h1", esc(title)) + intro + sorts
        if not rows:
            body += h("p", "There are no submissions to show.")
        body += self._posts(rows, in_forum) + pager(path, {"sort": sort}, page, pages)
        return self.page(request, title, body)

    @staticmethod
    def _posts(rows: list[tuple], in_forum: str = "") -> str:
        """The listing of ``rows``; within one forum (``in_forum``) posts do not repeat it."""
        items = []
        for post_id, title, score, created, comments, author, forum in rows:
            noun = "comment" if comments == 1 else "comments"
            where = "" if forum == in_forum else " to " + link(f"/f/{forum}", f"f/{forum}")
            items.append(
                h(
                    "li",
                    h("h3", link(f"/f/{forum}/{post_id}", title))
                    + h(
                        "p",
                        esc(f"Score: {score} · submitted on {created[:10]} by ")
                        + link(f"/user/{author}", author)
                        + where,
                    )
                    + link(f"/f/{forum}/{post_id}", f"{comments} {noun}"),
                )
            )
        return h("ul", "".join(items), aria_label="Submissions")

    @route("/")
    def home(self, request: Request) -> Response:
        if request.user_id is None:
            return self._listing(request, "All forums", "1", (), "/")
        return self._listing(
            request,
            "Your front page",
            "p.forum_id IN (SELECT forum_id FROM subscriptions WHERE user_id = ?)",
            (request.user_id,),
            "/",
        )

    @route("/all")
    def all_posts(self, request: Request) -> Response:
        return self._listing(request, "All forums", "1", (), "/all")

    @route("/forums")
    def forums(self, request: Request) -> Response:
        rows = self.db.execute(
            "SELECT f.name, f.title, (SELECT count(*) FROM subscriptions s WHERE s.forum_id = "
            "f.id), (SELECT count(*) FROM posts p WHERE p.forum_id = f.id) FROM forums f "
            "ORDER BY f.name COLLATE NOCASE"
        ).fetchall()
        body = h("h1", "List of forums") + table(
            ("Forum", "Title", "Subscribers", "Submissions"),
            [
                [link(f"/f/{name}", f"f/{name}"), esc(title), esc(subs), esc(posts)]
                for name, title, subs, posts in rows
            ],
        )
        return self.page(request, "List of forums", body)

    @route("/f/<forum>")
    def forum(self, request: Request, forum: str) -> Response:
        row = self.row("SELECT * FROM forums WHERE name = ?", forum)
        subscribers = self.db.execute(
            "SELECT count(*) FROM subscriptions WHERE forum_id = ?", (row["id"],)
        ).fetchone()[0]
        subscribed = self.db.execute(
            "SELECT 1 FROM subscriptions WHERE forum_id = ? AND user_id = ?",
            (row["id"], request.user_id),
        ).fetchone()
        intro = h("p", esc(row["description"])) + h("p", esc(f"{subscribers} subscribers"))
        if request.user_id:
            intro += form(
                f"/f/{row['name']}/subscribe",
                button("Unsubscribe" if subscribed else "Subscribe"),
                "post",
            )
            intro += link(f"/submit?forum={row['name']}", "Submit a post")
        name = row["name"]
        return self._listing(
            request, f"f/{name}", "p.forum_id = ?", (row["id"],), f"/f/{name}", intro, name
        )

    @route("/f/<forum>/subscribe", methods=("POST",))
    def subscribe(self, request: Request, forum: str) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        row = self.row("SELECT id, name FROM forums WHERE name = ?", forum)
        removed = self.db.execute(
            "DELETE FROM subscriptions WHERE user_id = ? AND forum_id = ?",
            (request.user_id, row["id"]),
        ).rowcount
        if removed:
            self.flash(request, f"You unsubscribed from f/{row['name']}.")
        else:
            self.db.execute("INSERT INTO subscriptions VALUES (?, ?)", (request.user_id, row["id"]))
            self.flash(request, f"You subscribed to f/{row['name']}.")
        return Response.redirect(f"/f/{row['name']}")

    # ------------------------------------------------------------------ posts
    def _post(self, forum: str, post_id: int) -> dict[str, Any]:
        return self.row(
            "SELECT p.*, u.username, f.name AS forum FROM posts p JOIN users u ON u.id = "
            "p.user_id JOIN forums f ON f.id = p.forum_id WHERE p.id = ? AND f.name = ?",
            post_id,
            forum,
        )

    @route("/f/<forum>/<int:post_id>")
    def post(self, request: Request, forum: str, post_id: int) -> Response:
        post = self._post(forum, post_id)
        base = f"/f/{post['forum']}/{post_id}"
        body = h("h1", esc(post["title"])) + h(
            "p",
            esc(f"Submitted on {post['created_at'][:10]} by ")
            + link(f"/user/{post['username']}", post["username"])
            + " to "
            + link(f"/f/{post['forum']}", f"f/{post['forum']}"),
        )
        body += h("p", esc(f"Score: {post['score']}"))
        if request.user_id:
            vote = self.db.execute(
                "SELECT choice FROM post_votes WHERE user_id = ? AND post_id = ?",
                (request.user_id, post_id),
            ).fetchone()
            if vote:
                body += h("p", esc(f"You {'upvoted' if vote[0] > 0 else 'downvoted'} this post."))
            body += form(
                f"{base}/vote",
                button("Upvote", "choice", "1") + button("Downvote", "choice", "-1"),
                "post",
            )
        body += h("div", esc(post["body"]), class_="body")
        comments = self.db.execute(
            "SELECT c.id, c.parent_id, u.username, c.body, c.created_at, c.score FROM comments c "
            "JOIN users u ON u.id = c.user_id WHERE c.post_id = ? ORDER BY c.id",
            (post_id,),
        ).fetchall()
        if request.user_id:
            body += form(
                f"{base}/comment",
                textarea("body", "Comment") + button("Post comment"),
                "post",
            )
        noun = "comment" if len(comments) == 1 else "comments"
        body += h("h2", f"{len(comments)} {noun}") + self._thread(base, comments)
        return self.page(request, post["title"], body)

    @staticmethod
    def _thread(base: str, comments: list[tuple]) -> str:
        children: dict[int | None, list[tuple]] = {}
        for comment in comments:
            children.setdefault(comment[1], []).append(comment)

        def branch(parent: int | None) -> str:
            items = []
            for comment_id, _, author, text, created, score in children.get(parent, ()):
                items.append(
                    h(
                        "li",
                        h(
                            "p",
                            link(f"/user/{author}", author)
                            + esc(f" · Score: {score} · {created[:10]}"),
                        )
                        + h("p", esc(text))
                        + link(f"{base}/comment/{comment_id}", "Reply")
                        + branch(comment_id),
                    )
                )
            return h("ul", "".join(items), aria_label="Comments") if items else ""

        return branch(None)

    @route("/f/<forum>/<int:post_id>/vote", methods=("POST",))
    def vote(self, request: Request, forum: str, post_id: int) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        post = self._post(forum, post_id)
        choice = request.field("choice")
        if choice not in ("1", "-1"):
            self.flash(request, "Choose Upvote or Downvote.")
            return Response.redirect(f"/f/{post['forum']}/{post_id}")
        wanted = int(choice)
        previous = self.db.execute(
            "SELECT choice FROM post_votes WHERE user_id = ? AND post_id = ?",
            (request.user_id, post_id),
        ).fetchone()
        old = previous[0] if previous else 0
        new = 0 if old == wanted else wanted  # voting the same way again retracts the vote
        if new:
            self.db.execute(
                "INSERT OR REPLACE INTO post_votes VALUES (?, ?, ?)",
                (request.user_id, post_id, new),
            )
        else:
            self.db.execute(
                "DELETE FROM post_votes WHERE user_id = ? AND post_id = ?",
                (request.user_id, post_id),
            )
        score = post["score"] + new - old
        self.db.execute(
            "UPDATE posts SET score = ?, hot = ? WHERE id = ?",
            (score, hot_rank(score, post["created_at"]), post_id),
        )
        self.flash(request, "Your vote was retracted." if not new else "Your vote was recorded.")
        return Response.redirect(f"/f/{post['forum']}/{post_id}")

    @route("/f/<forum>/<int:post_id>/comment", methods=("POST",))
    def comment(self, request: Request, forum: str, post_id: int) -> Response:
        return self._add_comment(request, self._post(forum, post_id), None)

    @route("/f/<forum>/<int:post_id>/comment/<int:comment_id>", methods=("GET", "POST"))
    def reply(self, request: Request, forum: str, post_id: int, comment_id: int) -> Response:
        post = self._post(forum, post_id)
        comment = self.row(
            "SELECT c.*, u.username FROM comments c JOIN users u ON u.id = c.user_id "
            "WHERE c.id = ? AND c.post_id = ?",
            comment_id,
            post_id,
        )
        if request.method == "POST":
            return self._add_comment(request, post, comment_id)
        body = h("h1", esc(f"Comment by {comment['username']}"))
        body += h(
            "p",
            "On " + link(f"/f/{post['forum']}/{post_id}", post["title"]),
        )
        body += h("p", esc(f"Score: {comment['score']} · {comment['created_at'][:10]}"))
        body += h("blockquote", esc(comment["body"]))
        if request.user_id:
            body += form(
                f"/f/{post['forum']}/{post_id}/comment/{comment_id}",
                textarea("body", "Reply") + button("Post reply"),
                "post",
            )
        return self.page(request, f"Comment by {comment['username']}", body)

    def _add_comment(self, request: Request, post: dict[str, Any], parent: int | None) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        target = f"/f/{post['forum']}/{post['id']}"
        text = request.field("body")
        if not text or len(text) > MAX_BODY:
            self.flash(request, f"A comment needs between 1 and {MAX_BODY:,} characters.")
            return Response.redirect(target if parent is None else f"{target}/comment/{parent}")
        self.db.execute(
            "INSERT INTO comments (post_id, parent_id, user_id, body, created_at, score) "
            "VALUES (?, ?, ?, ?, ?, 1)",
            (post["id"], parent, request.user_id, text, f"{FORUM_TODAY} 12:00"),
        )
        self.db.execute(
            "UPDATE posts SET comment_count = comment_count + 1 WHERE id = ?", (post["id"],)
        )
        self.flash(request, "Your comment was posted.")
        return Response.redirect(target)

    @route("/submit", methods=("GET", "POST"))
    def submit(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        if request.method == "POST":
            return self._create_post(request)
        forums = self.db.execute("SELECT name FROM forums ORDER BY name COLLATE NOCASE").fetchall()
        choices = [("", "Choose a forum")] + [(name, f"f/{name}") for (name,) in forums]
        body = h("h1", "Create submission") + form(
            "/submit",
            select("forum", "Forum", choices, request.arg("forum"))
            + textbox("title", "Title")
            + textarea("body", "Body")
            + button("Create submission"),
            "post",
        )
        return self.page(request, "Create submission", body)

    def _create_post(self, request: Request) -> Response:
        forum = self.db.execute(
            "SELECT id, name FROM forums WHERE name = ?", (request.field("forum"),)
        ).fetchone()
        title, text = request.field("title"), request.field("body")
        if forum is None or not title or len(title) > MAX_TITLE or len(text) > MAX_BODY:
            self.flash(
                request,
                f"Choose a forum and give a title of 1 to {MAX_TITLE} characters "
                f"(the body may have up to {MAX_BODY:,}).",
            )
            return Response.redirect(f"/submit?forum={forum[1] if forum else ''}")
        created = f"{FORUM_TODAY} 12:00"
        cursor = self.db.execute(
            "INSERT INTO posts (forum_id, user_id, title, body, created_at, score, hot) "
            "VALUES (?, ?, ?, ?, ?, 1, ?)",
            (forum[0], request.user_id, title, text, created, hot_rank(1, created)),
        )
        self.flash(request, "Your submission was created.")
        return Response.redirect(f"/f/{forum[1]}/{cursor.lastrowid}")

    # ------------------------------------------------------------------ search
    @route("/search")
    def search(self, request: Request) -> Response:
        query = fts_query(request.arg("q"))
        if not query:
            body = h("h1", "Search") + h("p", "Enter a search query.")
            return self.page(request, "Search", body)
        total = self.db.execute(
            "SELECT count(*) FROM post_search WHERE post_search MATCH ?", (query,)
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"SELECT {_POST_COLUMNS} JOIN post_search s ON s.rowid = p.id "
            "WHERE post_search MATCH ? ORDER BY s.rank, p.id LIMIT ? OFFSET ?",
            (query, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        title = f"Search results for '{request.arg('q')}'"
        body = h("h1", esc(title)) + h("p", esc(f"{total} results"))
        body += self._posts(rows) + pager("/search", {"q": request.arg("q")}, page, pages)
        return self.page(request, title, body)

    # ------------------------------------------------------------------ users
    def _user(self, username: str) -> dict[str, Any]:
        return self.row("SELECT * FROM users WHERE username = ?", username)

    def _profile(self, request: Request, user: dict[str, Any], tab: str) -> str:
        name = user["username"]
        body = h("h1", esc(name)) + h("p", esc(f"Registered on {user['created_at'][:10]}"))
        body += h("h2", "Biography") + h("p", esc(user["biography"] or "No biography."))
        if request.user_id == user["id"]:
            body += link(f"/user/{name}/edit_biography", "Edit biography")
        tabs = (("Submissions", f"/user/{name}"), ("Comments", f"/user/{name}/comments"))
        body += h(
            "nav",
            " ".join(
                link(href, label) if label != tab else h("strong", esc(label))
                for label, href in tabs
            ),
            aria_label="User",
        )
        return body

    @route("/user/<username>")
    def user(self, request: Request, username: str) -> Response:
        user = self._user(username)
        total = self.db.execute(
            "SELECT count(*) FROM posts WHERE user_id = ?", (user["id"],)
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            f"SELECT {_POST_COLUMNS} WHERE p.user_id = ? ORDER BY p.created_at DESC, p.id DESC "
            "LIMIT ? OFFSET ?",
            (user["id"], PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        body = self._profile(request, user, "Submissions")
        if not rows:
            body += h("p", "This user has no submissions.")
        body += self._posts(rows) + pager(f"/user/{user['username']}", {}, page, pages)
        return self.page(request, user["username"], body)

    @route("/user/<username>/comments")
    def user_comments(self, request: Request, username: str) -> Response:
        user = self._user(username)
        total = self.db.execute(
            "SELECT count(*) FROM comments WHERE user_id = ?", (user["id"],)
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            "SELECT c.id, c.body, c.created_at, c.score, p.id, p.title, f.name FROM comments c "
            "JOIN posts p ON p.id = c.post_id JOIN forums f ON f.id = p.forum_id "
            "WHERE c.user_id = ? ORDER BY c.created_at DESC, c.id DESC LIMIT ? OFFSET ?",
            (user["id"], PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        body = self._profile(request, user, "Comments")
        if not rows:
            body += h("p", "This user has no comments.")
        body += h(
            "ul",
            "".join(
                h(
                    "li",
                    h("p", esc(text))
                    + h(
                        "p",
                        esc(f"Score: {score} · {created[:10]} · on ")
                        + link(f"/f/{forum}/{post_id}", title),
                    ),
                )
                for _, text, created, score, post_id, title, forum in rows
            ),
            aria_label="Comments",
        )
        body += pager(f"/user/{user['username']}/comments", {}, page, pages)
        return self.page(request, f"Comments by {user['username']}", body)

    @route("/user/<username>/edit_biography", methods=("GET", "POST"))
    def edit_biography(self, request: Request, username: str) -> Response:
        user = self._user(username)
        if request.user_id != user["id"]:
            raise HttpError(403, "You can only edit your own biography.")
        if request.method == "POST":
            text = request.field("biography")
            if len(text) > 1_000:
                self.flash(request, "The biography can have at most 1,000 characters.")
                return Response.redirect(f"/user/{user['username']}/edit_biography")
            self.db.execute("UPDATE users SET biography = ? WHERE id = ?", (text, user["id"]))
            self.flash(request, "Your biography was saved.")
            return Response.redirect(f"/user/{user['username']}")
        body = h("h1", "Edit biography") + form(
            f"/user/{user['username']}/edit_biography",
            textarea("biography", "Biography", user["biography"]) + button("Save"),
            "post",
        )
        return self.page(request, "Edit biography", body)

    # ------------------------------------------------------------------ sign in
    @route("/login", methods=("GET", "POST"))
    def login(self, request: Request) -> Response:
        return self.sign_in(
            request,
            heading="Log in",
            field="username",
            label="Username",
            lookup="SELECT id, password_hash FROM users WHERE username = ?",
            landing="/",
            submit="Log in",
            refused="Invalid username or password.",
            match_case=True,
        )

    @route("/logout")
    def logout(self, request: Request) -> Response:
        self.log_out(request)
        return Response.redirect("/")
