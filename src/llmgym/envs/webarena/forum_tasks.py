"""Task templates on the forum (``localhost:9999``), signed in as MarvelsGrantMan136.

Information seeking (a post's author, score and comment count, a forum's top and newest post
and subscribers, a user's posts, biography and comments, a post that does not exist),
navigation (sorted forums, a poster's page, a user's comments, a search) and changes (votes,
subscriptions, a new post, a comment, a reply, the biography).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.checks import only_added
from llmgym.envs.webarena.forum import Forum
from llmgym.envs.webarena.forum_data import (
    ADJECTIVES,
    FORUM_USER,
    FORUMS,
    TITLE_TEMPLATES,
    ForumData,
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

__all__ = ["FORUM", "open_forum", "open_post"]

FORUM = f"http://localhost:{Forum.port}"
SEARCH_BOX = "Search query"
_COMMENT_COUNT = re.compile(r"\d+ comments?")
_SUBSCRIBERS = re.compile(r"\d+ subscribers")
_SORT_WORDS = {"hot": "hottest", "new": "newest", "top": "top-scoring"}
_COMMENTS = (
    "Thanks, this is really helpful!",
    "I had the same experience last year.",
    "Could you share where you bought it?",
    "Great write-up, saving this for later.",
    "I respectfully disagree with this.",
    "Following this thread for updates.",
)
_POST_BODIES = (
    "Curious what everyone here thinks.",
    "Please share your experiences below.",
    "Any tips are appreciated, thanks!",
    "I will post an update next week.",
)
_BIOGRAPHIES = (
    "Coffee lover and weekend hiker.",
    "I mostly post about books and movies.",
    "Software developer from Pittsburgh.",
    "Here to learn something new every day.",
    "Amateur photographer and part-time baker.",
)


# ---------------------------------------------------------------------------- draws
def posts(data: Data) -> list[tuple]:
    """Posts whose title no other post has: (id, title, forum, author, score, comments)."""
    return data.generated(
        ForumData,
        "SELECT p.id, p.title, f.name, u.username, p.score, p.comment_count FROM posts p "
        "JOIN forums f ON f.id = p.forum_id JOIN users u ON u.id = p.user_id WHERE p.title "
        "IN (SELECT title FROM posts GROUP BY title HAVING count(*) = 1) ORDER BY p.id",
    )


def forum_names() -> list[str]:
    return [name for name, _, _ in FORUMS]


# ---------------------------------------------------------------------------- oracle helpers
def open_post(page: PageView, title: str) -> str | None:
    """Search for the post ``title`` and open it; ``None`` once it is open."""
    if page.find("heading", title) and page.find("button", "Upvote"):
        return None
    found = page.find("link", title)
    if found is not None:
        return page.click(found)
    if page.path == "/search" and page.query.get("q") == title:
        return page.link("Next")
    return page.type(need(page.find("textbox", SEARCH_BOX), "search box"), title)


def search_exhausted(page: PageView, title: str) -> bool:
    """Whether the page is the last page of the search for ``title`` and does not list it."""
    return (
        page.path == "/search"
        and page.query.get("q") == title
        and page.find("link", title) is None
        and page.find("link", "Next") is None
    )


def open_forum(page: PageView, forum: str) -> str | None:
    """Open ``f/forum`` from the forum list; ``None`` once there."""
    if page.path == f"/f/{forum}":
        return None
    found = page.find("link", f"f/{forum}")
    if found is not None and page.path == "/forums":
        return page.click(found)
    return page.link("Forums")


def open_user(page: PageView, user: str, tab: str = "") -> str | None:
    """Open ``user``'s profile (``tab``: ``"comments"``); ``None`` once there."""
    path = f"/user/{user}" + (f"/{tab}" if tab else "")
    return None if page.path == path else f"goto [{FORUM}{path}]"


def first_submission(page: PageView) -> str:
    """The title of the first post of a listing."""
    listing = need(page.find("list", "Submissions"), "submissions")
    return need(page.find("heading", after=listing), "first post").name


# ---------------------------------------------------------------------------- information
def lone_comments(data: Data, post_id: int, excluded: str) -> list[tuple[int, str, str]]:
    """``(id, author, text)`` of the comments on a post by users who commented on it once (a
    comment named by its author is unambiguous), except ``excluded``'s."""
    comments = data.all(
        ForumData,
        "SELECT c.id, u.username, c.body FROM comments c JOIN users u ON u.id = c.user_id "
        "WHERE c.post_id = ? ORDER BY c.id",
        post_id,
    )
    authors = [author for _, author, _ in comments]
    return [row for row in comments if authors.count(row[1]) == 1 and row[1] != excluded]


class PostTemplate(SubjectTemplate):
    """A template about one post named by its (unique) title and forum: :meth:`about` gets a
    row of :func:`posts`."""

    sites = ("forum",)

    def subject(self, data: Data, rng: TaskRng) -> tuple:
        return rng.choice(posts(data))


@register
class PostAuthor(PostTemplate):
    id = "forum/post-author"
    slot = 50
    intent = "Who submitted the post '{title}' in f/{forum}?"

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        if rng.random() < 0.2:
            return self._missing(rng)
        return super().draw(data, rng)

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        return self.make(
            {"title": post[1], "forum": post[2]},
            (StringMatch(exact=post[3]),),
            start_url=f"{FORUM}/",
        )

    def _missing(self, rng: TaskRng) -> Instance:
        """A post no one wrote (about a unicycle, which no forum mentions): answer N/A."""
        forum = rng.choice(FORUMS)
        title = rng.choice(TITLE_TEMPLATES).format(
            noun="unicycle",
            Noun="Unicycle",
            other=rng.choice(forum[2].split()),
            adj=rng.choice(ADJECTIVES),
            years=rng.randint(2, 15),
            number=rng.randint(2, 99),
            price=rng.choice((50, 100, 500)),
            city="Boston",
            forum=forum[0],
        )
        return self.make(
            {"title": title, "forum": forum[0]}, (StringMatch(fuzzy="N/A"),), start_url=f"{FORUM}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if search_exhausted(page, params["title"]):
            return "stop [N/A]"
        step = open_post(page, params["title"])
        if step:
            return step
        byline = need(page.find("StaticText", prefix="Submitted on "), "byline")
        return f"stop [{need(page.find('link', after=byline), 'author').name}]"


@register
class PostStat(PostTemplate):
    id = "forum/post-stat"
    slot = 51
    intent = "What is the {stat} of the post '{title}' in f/{forum}?"
    _STATS: ClassVar[dict[str, int]] = {"score": 4, "number of comments": 5}
    """Each statistic and its column of :func:`posts`."""

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        stat = rng.choice(sorted(self._STATS))
        return self.make(
            {"stat": stat, "title": post[1], "forum": post[2]},
            (StringMatch(exact=str(post[self._STATS[stat]])),),
            start_url=f"{FORUM}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_post(page, params["title"])
        if step:
            return step
        if params["stat"] == "score":
            return f"stop [{need(page.text('Score: '), 'score')}]"
        heading = next((n for n in page.nodes("heading") if _COMMENT_COUNT.fullmatch(n.name)), None)
        return f"stop [{need(heading, 'comment count').name.split()[0]}]"


@register
class CommentText(PostTemplate):
    id = "forum/comment-text"
    slot = 52
    intent = "What did {user} comment on the post '{title}' in f/{forum}?"

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        unique = lone_comments(data, post[0], post[3])
        if not unique:
            return None
        _, author, text = rng.choice(unique)
        return self.make(
            {"user": author, "title": post[1], "forum": post[2]},
            (StringMatch(fuzzy=text),),
            start_url=f"{FORUM}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_post(page, params["title"])
        if step:
            return step
        comments = need(page.find("list", "Comments"), "comments")
        author = need(page.find("link", params["user"], after=comments), "comment")
        meta = need(page.find("StaticText", after=author), "comment score")
        return f"stop [{need(page.find('StaticText', after=meta), 'comment text').name}]"


class ForumTemplate(SubjectTemplate):
    """A template about one forum: :meth:`about` gets its name."""

    sites = ("forum",)

    def subject(self, data: Data, rng: TaskRng) -> str:
        return rng.choice(forum_names())


@register
class ForumFact(ForumTemplate):
    id = "forum/forum-fact"
    slot = 53
    intent = "What is the {fact} of f/{forum}?"
    _FACTS: ClassVar[dict[str, str]] = {
        "title of the most recent post": "new",
        "title of the highest-scoring post": "top",
        "number of subscribers": "",
    }
    """Each fact and the listing order that shows it first (none: the forum's header)."""

    def about(self, data: Data, rng: TaskRng, forum: str) -> Instance | None:
        fact = rng.choice(sorted(self._FACTS))
        sort = self._FACTS[fact]
        if not sort:
            count = data.one(
                ForumData,
                "SELECT count(*) FROM subscriptions s JOIN forums f ON f.id = s.forum_id "
                "WHERE f.name = ?",
                forum,
            )
            answer = str(count)
        else:
            column = "p.created_at" if sort == "new" else "p.score"
            rows = data.all(
                ForumData,
                f"SELECT p.title, {column} FROM posts p JOIN forums f ON f.id = p.forum_id "
                f"WHERE f.name = ? ORDER BY {column} DESC LIMIT 2",
                forum,
            )
            if len(rows) < 2 or rows[0][1] == rows[1][1]:
                return None
            answer = rows[0][0]
        return self.make(
            {"fact": fact, "forum": forum}, (StringMatch(exact=answer),), start_url=f"{FORUM}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_forum(page, params["forum"])
        if step:
            return step
        sort = self._FACTS[params["fact"]]
        if not sort:
            count = next(
                (n for n in page.nodes("StaticText") if _SUBSCRIBERS.fullmatch(n.name)), None
            )
            return f"stop [{need(count, 'subscriber count').name.split()[0]}]"
        if page.query.get("sort") != sort or page.query.get("page", "1") != "1":
            return page.link(sort.title())
        return f"stop [{first_submission(page)}]"


def active_users(data: Data) -> list[tuple[str, int]]:
    """Users with at least one post, and their post counts."""
    return data.generated(
        ForumData,
        "SELECT u.username, count(*) FROM posts p JOIN users u ON u.id = p.user_id "
        "WHERE u.id != 1 GROUP BY u.id ORDER BY u.id",
    )


@register
class UserPostCount(TaskTemplate):
    id = "forum/user-post-count"
    slot = 55
    intent = "How many posts has {user} submitted to the forum?"
    sites = ("forum",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        user, count = rng.choice(active_users(data))
        return self.make({"user": user}, (StringMatch(exact=str(count)),), start_url=f"{FORUM}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path != f"/user/{params['user']}":
            return f"goto [{FORUM}/user/{params['user']}]"
        listing = page.find("list", "Submissions")
        counted = memory.setdefault("counted", {})
        counted[page.query.get("page", "1")] = sum(
            1 for node in page.nodes("listitem") if listing and node.id > listing.id
        )
        following = page.find("link", "Next")
        if following is not None:
            return page.click(following)
        return f"stop [{sum(counted.values())}]"


@register
class UserBiography(TaskTemplate):
    id = "forum/user-biography"
    slot = 56
    intent = "What does the biography of the forum user {user} say?"
    sites = ("forum",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        user, _ = rng.choice(active_users(data))
        bio = data.one(ForumData, "SELECT biography FROM users WHERE username = ?", user)
        return self.make({"user": user}, (StringMatch(fuzzy=bio),), start_url=f"{FORUM}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_user(page, params["user"])
        if step:
            return step
        heading = need(page.find("heading", "Biography"), "biography")
        return f"stop [{need(page.find('StaticText', after=heading), 'text').name}]"


# ---------------------------------------------------------------------------- navigation
@register
class ForumSorted(ForumTemplate):
    id = "forum/nav-forum-sorted"
    slot = 57
    kind = "navigation"
    intent = "Show me the {order} posts of f/{forum}."

    def about(self, data: Data, rng: TaskRng, forum: str) -> Instance | None:
        sort = rng.choice(sorted(_SORT_WORDS))
        return self.make(
            {"order": _SORT_WORDS[sort], "forum": forum},
            (UrlMatch(f"{FORUM}/f/{forum}?sort={sort}"),),
            start_url=f"{FORUM}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_forum(page, params["forum"])
        if step:
            return step
        sort = next(key for key, word in _SORT_WORDS.items() if word == params["order"])
        if page.query.get("sort") == sort:
            return "stop []"
        return page.link(sort.title())


@register
class AuthorPage(PostTemplate):
    id = "forum/nav-author-page"
    slot = 58
    kind = "navigation"
    intent = "Open the profile page of the user who submitted '{title}' in f/{forum}."

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        return self.make(
            {"title": post[1], "forum": post[2]},
            (UrlMatch(f"{FORUM}/user/{post[3]}"),),
            start_url=f"{FORUM}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path.startswith("/user/") and page.find("heading", "Biography"):
            return "stop []"
        step = open_post(page, params["title"])
        if step:
            return step
        byline = need(page.find("StaticText", prefix="Submitted on "), "byline")
        return page.click(need(page.find("link", after=byline), "author"))


@register
class UserComments(TaskTemplate):
    id = "forum/nav-user-comments"
    slot = 59
    kind = "navigation"
    intent = "Show me the comments that {user} has written."
    sites = ("forum",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        user, _ = rng.choice(active_users(data))
        return self.make(
            {"user": user}, (UrlMatch(f"{FORUM}/user/{user}/comments"),), start_url=f"{FORUM}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path == f"/user/{params['user']}/comments":
            return "stop []"
        return open_user(page, params["user"]) or page.link("Comments")


@register
class SearchPosts(PostTemplate):
    id = "forum/nav-search"
    slot = 60
    kind = "navigation"
    intent = "Search the forum for posts about '{query}'."

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        words = [w for w in post[1].rstrip("?!").split() if w.isalpha() and len(w) > 3]
        if len(words) < 2:
            return None
        query = " ".join(rng.sample(words, 2)).lower()
        return self.make(
            {"query": query}, (UrlMatch(f"{FORUM}/search?q={query}"),), start_url=f"{FORUM}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path == "/search" and page.query.get("q") == params["query"]:
            return "stop []"
        return page.type(need(page.find("textbox", SEARCH_BOX), "search box"), params["query"])


# ---------------------------------------------------------------------------- changes
def subscriptions(state: Data) -> set[int]:
    return {
        row[0]
        for row in state.all(ForumData, "SELECT forum_id FROM subscriptions WHERE user_id = 1")
    }


@register
class Vote(PostTemplate):
    id = "forum/vote"
    slot = 61
    kind = "change"
    intent = "{action} the post '{title}' in f/{forum}."
    _CHOICES: ClassVar[dict[str, int]] = {"Upvote": 1, "Downvote": -1}

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        voted = data.one(ForumData, "SELECT 1 FROM post_votes WHERE post_id = ?", post[0])
        if voted:
            return None
        return self.make(
            {"action": rng.choice(sorted(self._CHOICES)), "title": post[1], "forum": post[2]},
            (ProgramCheck(),),
            start_url=f"{FORUM}/",
            reference={"post_id": post[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        post, choice = instance.reference["post_id"], self._CHOICES[instance.params["action"]]
        score = "SELECT score FROM posts WHERE id = ?"
        voted = only_added(
            state,
            ForumData,
            "SELECT post_id, choice FROM post_votes WHERE user_id = 1",
            (post, choice),
        )
        return voted and (
            state.one(ForumData, score, post) == state.initial.one(ForumData, score, post) + choice
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, f"You {params['action'].lower()}d this post.") or open_post(
            page, params["title"]
        )
        return step or page.button(params["action"])


def forum_id(name: str) -> int:
    return next(i for i, forum in enumerate(FORUMS, start=1) if forum[0] == name)


@register
class Subscribe(ForumTemplate):
    id = "forum/subscribe"
    slot = 62
    kind = "change"
    intent = "Subscribe to f/{forum}."

    def about(self, data: Data, rng: TaskRng, forum: str) -> Instance | None:
        if forum_id(forum) in subscriptions(data):
            return None
        return self.make(
            {"forum": forum},
            (ProgramCheck(),),
            start_url=f"{FORUM}/",
            reference={"forum_id": forum_id(forum)},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        before = subscriptions(state.initial)
        return subscriptions(state) == before | {instance.reference["forum_id"]}

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_forum(page, params["forum"])
        if step:
            return step
        return "stop []" if page.find("button", "Unsubscribe") else page.button("Subscribe")


@register
class SwitchSubscription(ForumTemplate):
    id = "forum/switch-subscription"
    slot = 63
    kind = "change"
    intent = "Unsubscribe from f/{old} and subscribe to f/{new} instead."

    def about(self, data: Data, rng: TaskRng, forum: str) -> Instance | None:
        subscribed = sorted(subscriptions(data))
        if forum_id(forum) in subscribed:
            return None
        old = FORUMS[rng.choice(subscribed) - 1][0]
        return self.make(
            {"old": old, "new": forum},
            (ProgramCheck(),),
            start_url=f"{FORUM}/",
            reference={"old_id": forum_id(old), "new_id": forum_id(forum)},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        before = subscriptions(state.initial)
        after = before - {instance.reference["old_id"]} | {instance.reference["new_id"]}
        return subscriptions(state) == after

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path == f"/f/{params['old']}" and page.find("button", "Subscribe"):
            memory["left"] = True
        if not memory.get("left"):
            return open_forum(page, params["old"]) or page.button("Unsubscribe")
        step = open_forum(page, params["new"])
        if step:
            return step
        return "stop []" if page.find("button", "Unsubscribe") else page.button("Subscribe")


@register
class SubmitPost(ForumTemplate):
    id = "forum/submit-post"
    slot = 64
    kind = "change"
    intent = "Post to f/{forum} with the title '{title}' and the text '{text}'."

    def about(self, data: Data, rng: TaskRng, forum: str) -> Instance | None:
        noun = rng.choice(next(f for f in FORUMS if f[0] == forum)[2].split())
        title = rng.choice(
            (
                f"Looking for advice on my {noun}",
                f"What is your favourite {noun}?",
                f"My {noun} story",
                f"Question about {noun} maintenance",
            )
        )
        return self.make(
            {"forum": forum, "title": title, "text": rng.choice(_POST_BODIES)},
            (ProgramCheck(),),
            start_url=f"{FORUM}/",
        )

    def check(self, state: Data, instance: Instance) -> bool:
        p = instance.params
        rows = state.all(
            ForumData,
            "SELECT f.name, p.user_id, p.title, p.body FROM posts p JOIN forums f ON "
            "f.id = p.forum_id WHERE p.id > ?",
            ForumData.posts,
        )
        return rows == [(p["forum"], 1, p["title"], p["text"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "Your submission was created.")
        if step:
            return step
        if page.path != "/submit":
            return page.link("Submit")
        forum = need(page.find("combobox", "Forum"), "forum")
        return (
            page.choose(forum, f"f/{params['forum']}")
            or page.fill({"Title": params["title"], "Body": params["text"]})
            or page.button("Create submission")
        )


@register
class CommentOnPost(PostTemplate):
    id = "forum/comment-post"
    slot = 65
    kind = "change"
    intent = "Comment '{text}' on the post '{title}' in f/{forum}."

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        return self.make(
            {"text": rng.choice(_COMMENTS), "title": post[1], "forum": post[2]},
            (ProgramCheck(),),
            start_url=f"{FORUM}/",
            reference={"post_id": post[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        total = state.initial.one(ForumData, "SELECT max(id) FROM comments")
        rows = state.all(
            ForumData,
            "SELECT post_id, parent_id, user_id, body FROM comments WHERE id > ?",
            total,
        )
        wanted = (instance.reference["post_id"], instance.reference.get("comment_id"), 1)
        return rows == [(*wanted, instance.params["text"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "Your comment was posted.") or open_post(page, params["title"])
        if step:
            return step
        return page.fill({"Comment": params["text"]}) or page.button("Post comment")


@register
class ReplyToComment(CommentOnPost):
    id = "forum/reply-comment"
    slot = 54
    intent = "Reply '{text}' to {user}'s comment on the post '{title}' in f/{forum}."

    def about(self, data: Data, rng: TaskRng, post: tuple) -> Instance | None:
        unique = lone_comments(data, post[0], FORUM_USER)
        if not unique:
            return None
        comment_id, author, _ = rng.choice(unique)
        return self.make(
            {"text": rng.choice(_COMMENTS), "user": author, "title": post[1], "forum": post[2]},
            (ProgramCheck(),),
            start_url=f"{FORUM}/",
            reference={"post_id": post[0], "comment_id": comment_id},
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "Your comment was posted.")
        if step:
            return step
        if page.find("heading", f"Comment by {params['user']}") and page.find(
            "link", params["title"]
        ):
            return page.fill({"Reply": params["text"]}) or page.button("Post reply")
        step = open_post(page, params["title"])
        if step:
            return step
        comments = need(page.find("list", "Comments"), "comments")
        author = need(page.find("link", params["user"], after=comments), "comment")
        return page.click(need(page.find("link", "Reply", after=author), "reply link"))


@register
class EditBiography(TaskTemplate):
    id = "forum/edit-biography"
    slot = 66
    kind = "change"
    intent = "Change my forum biography to '{text}'."
    sites = ("forum",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        first, second = rng.sample(_BIOGRAPHIES, 2)
        text = first if rng.random() < 0.3 else f"{first} {second}"
        return self.make({"text": text}, (ProgramCheck(),), start_url=f"{FORUM}/")

    def check(self, state: Data, instance: Instance) -> bool:
        bio = state.one(ForumData, "SELECT biography FROM users WHERE id = 1")
        return bio == instance.params["text"]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = done_when(page, "Your biography was saved.")
        if step:
            return step
        if page.path.endswith("/edit_biography"):
            return page.fill({"Biography": params["text"]}) or page.button("Save")
        if page.find("link", "Edit biography"):
            return page.link("Edit biography")
        home = need(page.find("link", "Postmill"), "header")
        return page.click(need(page.find("link", after=home), "my profile"))
