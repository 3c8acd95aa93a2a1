"""The forum's data (WebArena's Postmill "reddit"): forums, users, posts, threaded comments,
votes and subscriptions, generated from a seed with the word lists below.

Every forum has its own topic nouns; post titles, bodies and comments are sentence templates
filled with them, so f/gardening talks about tomatoes and f/cycling about derailleurs. The
signed-in user of every episode is user 1, ``MarvelsGrantMan136`` (WebArena's reddit account),
subscribed to a handful of forums, with posts, comments and votes of their own.
"""

from __future__ import annotations

import math
import sqlite3
from typing import ClassVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.generation import random_datetime, wordlist
from llmgym.envs.webarena.web import password_hash

__all__ = [
    "FORUMS",
    "FORUM_PASSWORD",
    "FORUM_SESSION",
    "FORUM_TODAY",
    "FORUM_USER",
    "ForumData",
    "hot_rank",
]

FORUM_TODAY = "2023-12-31"
"""The forum's today: posts span 2022 and 2023."""
FORUM_SESSION = "marvelsgrantman136-session"
"""The forum session of the signed-in user (user 1) in the generated data."""
FORUM_USER = "MarvelsGrantMan136"
FORUM_PASSWORD = "test1234"

_SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL, biography TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE forums (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, title TEXT NOT NULL,
    description TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE subscriptions (
    user_id INTEGER NOT NULL REFERENCES users(id), forum_id INTEGER NOT NULL REFERENCES forums(id),
    PRIMARY KEY (user_id, forum_id)
);
CREATE TABLE posts (
    id INTEGER PRIMARY KEY, forum_id INTEGER NOT NULL REFERENCES forums(id),
    user_id INTEGER NOT NULL REFERENCES users(id), title TEXT NOT NULL, body TEXT NOT NULL,
    created_at TEXT NOT NULL, score INTEGER NOT NULL, hot REAL NOT NULL,
    comment_count INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL REFERENCES posts(id),
    parent_id INTEGER REFERENCES comments(id), user_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL, created_at TEXT NOT NULL, score INTEGER NOT NULL
);
CREATE TABLE post_votes (
    user_id INTEGER NOT NULL REFERENCES users(id), post_id INTEGER NOT NULL REFERENCES posts(id),
    choice INTEGER NOT NULL, PRIMARY KEY (user_id, post_id)
);
"""
_INDEXES = """
CREATE INDEX subscriptions_by_forum ON subscriptions (forum_id);
CREATE INDEX posts_by_forum_hot ON posts (forum_id, hot);
CREATE INDEX posts_by_forum_new ON posts (forum_id, created_at);
CREATE INDEX posts_by_forum_top ON posts (forum_id, score);
CREATE INDEX posts_hot ON posts (hot);
CREATE INDEX posts_new ON posts (created_at);
CREATE INDEX posts_top ON posts (score);
CREATE INDEX posts_by_user ON posts (user_id, created_at);
CREATE INDEX comments_by_post ON comments (post_id);
CREATE INDEX comments_by_user ON comments (user_id, created_at);
CREATE VIRTUAL TABLE post_search USING fts5(
    title, body, content='posts', content_rowid='id', tokenize='porter unicode61'
);
INSERT INTO post_search (post_search) VALUES ('rebuild');
CREATE TRIGGER posts_ai AFTER INSERT ON posts BEGIN
    INSERT INTO post_search (rowid, title, body) VALUES (new.id, new.title, new.body);
END;
"""
"""Created after the bulk inserts (faster than keeping them up to date row by row)."""

FORUMS: tuple[tuple[str, str, str], ...] = (
    ("books", "Books", "novel memoir paperback audiobook library series author bookshelf"),
    ("movies", "Movies", "sequel trailer director soundtrack remake documentary cinema screenplay"),
    ("gaming", "Gaming", "console controller speedrun headset roguelike handheld mod keyboard"),
    ("technology", "Technology", "laptop smartphone router smartwatch tablet charger monitor SSD"),
    ("science", "Science", "telescope microscope experiment fossil vaccine particle glacier comet"),
    ("cooking", "Cooking", "skillet sourdough casserole knife marinade dumpling risotto wok"),
    ("travel", "Travel", "backpack itinerary hostel passport layover suitcase railpass ferry"),
    ("fitness", "Fitness", "deadlift treadmill kettlebell marathon protein squat rower stretch"),
    ("music", "Music", "guitar synthesizer vinyl playlist amplifier drumkit ukulele turntable"),
    ("photography", "Photography", "lens tripod mirrorless darkroom flash filter sensor print"),
    ("personalfinance", "Personal Finance", "budget mortgage paycheck IRA savings loan 401k tax"),
    ("gardening", "Gardening", "tomato compost trellis seedling greenhouse hydrangea mulch hose"),
    ("history", "History", "castle manuscript empire treaty dynasty archive battlefield map"),
    ("space", "Space", "rocket satellite rover nebula eclipse launch asteroid spacesuit"),
    ("programming", "Programming", "compiler debugger framework regex linter database API IDE"),
    ("DIY", "Do It Yourself", "drill workbench drywall faucet sander deck shelf toolbox"),
    ("cycling", "Cycling", "derailleur saddle helmet tubeless crankset pannier gravelbike chain"),
    ("coffee", "Coffee", "espresso grinder pourover roast moka aeropress kettle latte"),
    ("pets", "Pets", "kitten puppy aquarium leash litterbox hamster parrot harness"),
    ("boardgames", "Board Games", "meeple expansion dice deckbuilder sleeve token wargame puzzle"),
    ("hiking", "Hiking", "trail boots tent trekking-pole summit compass canteen headlamp"),
    ("art", "Art", "watercolor canvas sketchbook easel charcoal gouache portrait mural"),
    ("cars", "Cars", "sedan hatchback tire brake radiator hybrid dashcam wagon"),
    ("anime", "Anime", "manga figure season opening studio cosplay artbook soundtrack"),
    ("baking", "Baking", "croissant baguette oven cupcake mixer scone pretzel brioche"),
    ("knitting", "Knitting", "yarn sweater scarf needle pattern mitten cardigan beanie"),
    ("boston", "Boston", "subway brownstone harbor bakery ballpark marathon bridge ferry"),
    ("pittsburgh", "Pittsburgh", "incline bridge pierogi stadium tunnel riverfront bakery trolley"),
    ("nyc", "New York City", "subway bodega rooftop apartment bagel ferry park museum"),
    ("askscience", "Ask Science", "atom enzyme galaxy volcano neuron magnet photon glacier"),
    ("woodworking", "Woodworking", "chisel router bandsaw dovetail walnut clamp plane lathe"),
    ("running", "Running", "sneaker stopwatch 10k trail interval shoe marathon track"),
)
"""Each forum: name, title and its topic nouns (space-separated)."""


ADJECTIVES = wordlist(
    "cheap old tiny huge vintage modern quiet noisy reliable fancy simple weird classic "
    "homemade secondhand budget premium colorful lightweight sturdy"
)
TITLE_TEMPLATES = (
    "What is the best {noun} for a beginner?",
    "Looking for {adj} {noun} recommendations",
    "My {adj} {noun} after {years} years",
    "Is it worth getting a {noun} in 2024?",
    "TIL the first {noun} was {adj}",
    "Unpopular opinion: the {noun} is overrated",
    "Help! My {noun} keeps breaking",
    "Finally finished my {noun} project",
    "How do you store your {noun}?",
    "A {adj} {noun} I found at a yard sale",
    "Anyone else tired of {adj} {noun} posts?",
    "Weekly {noun} discussion thread #{number}",
    "First time trying a {noun}, any tips?",
    "The {noun} that changed my life",
    "Why is every {noun} so {adj} lately?",
    "Best {noun} under ${price}?",
    "Just got my first {adj} {noun}!",
    "Thoughts on the new {adj} {noun}?",
    "{Noun} or {other}: which one should I pick?",
    "PSA: check your {noun} before winter",
    "I made a spreadsheet of every {noun} I own",
    "Rate my {adj} {noun} setup",
    "Where can I find a {adj} {noun} near {city}?",
    "Is a {adj} {noun} better than a {other}?",
    "{years} years with the same {noun}, AMA",
)
BODY_SENTENCES = (
    "I have been thinking about this {noun} for weeks.",
    "My friend says a {adj} one is enough, but I am not sure.",
    "Budget is around ${price}, give or take.",
    "Any advice is welcome, thanks in advance!",
    "Pictures in the comments if anyone is interested.",
    "I tried the {other} first and it did not work out.",
    "Edit: thanks everyone for the helpful replies.",
    "This is my {number}th attempt, so go easy on me.",
    "It still works after all these years.",
    "Curious what the rest of you think.",
)
COMMENT_TEMPLATES = (
    "Great {noun}! Where did you get it?",
    "I had the same problem with my {noun}.",
    "Honestly a {adj} {noun} is all you need.",
    "This is the way.",
    "Came here to say this.",
    "Have you tried a {other} instead?",
    "I disagree, the {noun} is underrated.",
    "Source? I would like to read more about the {noun}.",
    "Thanks for sharing, this made my day.",
    "Mine lasted {years} years before it gave up.",
    "You should post this in f/{forum} too.",
    "The {adj} ones are a trap, trust me.",
    "Saving this for later.",
    "Can confirm, my {other} does the same thing.",
    "Underrated post right here.",
    "I paid ${price} for mine and regret nothing.",
    "Looks {adj}, nice work!",
    "Does anyone know if the {noun} comes in other colors?",
)
BIOGRAPHIES = (
    "Just here for the {noun} content.",
    "Lurker since {year}.",
    "I post about {forum} mostly.",
    "Professional {noun} enthusiast.",
    "Opinions are my own.",
)
CITIES = wordlist("Boston Pittsburgh Seattle Denver Austin Chicago Portland Atlanta Phoenix Miami")
USER_PREFIXES = wordlist(
    "Quiet Brave Lazy Happy Rusty Clever Cosmic Silver Gentle Lucky Salty Sleepy Mellow "
    "Fuzzy Swift Bold Noble Witty Jolly Sunny Grumpy Tiny Mighty Crimson Golden"
)
USER_NOUNS = wordlist(
    "Otter Falcon Badger Panda Walrus Pigeon Moose Lynx Heron Beaver Gecko Koala Raven "
    "Turtle Fox Yak Marmot Puffin Bison Squid Lemur Tapir Newt Crane Wombat"
)
_EPOCH = 1_134_028_003
"""Reddit's hot-ranking epoch (seconds), as in its open-sourced ranking."""


def hot_rank(score: int, created_at: str) -> float:
    """Reddit's "hot" order of a post with ``score`` created at ``created_at``
    (``YYYY-MM-DD HH:MM``): the vote's order of magnitude plus its age in 12.5-hour units."""
    year, month, day = (int(part) for part in created_at[:10].split("-"))
    hour, minute = int(created_at[11:13]), int(created_at[14:16])
    days = _days_from_civil(year, month, day)
    seconds = days * 86_400 + hour * 3_600 + minute * 60 - _EPOCH
    order = math.log10(max(abs(score), 1))
    sign = 1 if score > 0 else -1 if score < 0 else 0
    return round(sign * order + seconds / 45_000, 7)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


class ForumData(Dataset):
    """The forum's database (see the module docstring); sizes are fixed per seed."""

    name = "forum"
    version = 1
    users: ClassVar[int] = 600
    posts: ClassVar[int] = 4_000
    own_posts: ClassVar[int] = 12

    def build(self, db: sqlite3.Connection, seed: int) -> None:
        db.executescript(_SCHEMA)
        rng = TaskRng("webarena-forum", seed)
        self._users(db, rng)
        db.executemany(
            "INSERT INTO forums VALUES (?, ?, ?, ?, ?)",
            [
                (
                    index,
                    name,
                    title,
                    f"A place to talk about {title.lower()}: {', '.join(nouns.split()[:3])} "
                    "and more.",
                    random_datetime(rng, 2015, 2020),
                )
                for index, (name, title, nouns) in enumerate(FORUMS, start=1)
            ],
        )
        self._subscriptions(db, rng)
        comment_counts = self._posts(db, rng)
        self._comments(db, rng, comment_counts)
        db.executescript(_INDEXES)
        db.execute(
            "INSERT INTO sessions (sid, site, user_id) VALUES (?, 'forum', 1)", (FORUM_SESSION,)
        )

    def _users(self, db: sqlite3.Connection, rng: TaskRng) -> None:
        names = [FORUM_USER]
        seen = {FORUM_USER.lower()}
        while len(names) < self.users:
            name = f"{rng.choice(USER_PREFIXES)}{rng.choice(USER_NOUNS)}{rng.randint(1, 999)}"
            if name.lower() not in seen:
                seen.add(name.lower())
                names.append(name)
        rows = []
        for index, name in enumerate(names, start=1):
            forum = rng.choice(FORUMS)
            bio = rng.choice(BIOGRAPHIES).format(
                noun=rng.choice(forum[2].split()), year=rng.randint(2008, 2020), forum=forum[0]
            )
            rows.append(
                (
                    index,
                    name,
                    password_hash(FORUM_PASSWORD, name.lower()),
                    bio,
                    random_datetime(rng, 2012, 2021),
                )
            )
        db.executemany("INSERT INTO users VALUES (?, ?, ?, ?, ?)", rows)

    def _subscriptions(self, db: sqlite3.Connection, rng: TaskRng) -> None:
        popularity = [rng.randint(1, 10) for _ in FORUMS]
        rows = set()
        for user in range(1, self.users + 1):
            count = 8 if user == 1 else rng.randint(0, 12)
            for _ in range(count):
                forum = rng.weighted_choice(range(1, len(FORUMS) + 1), popularity)
                rows.add((user, forum))
        db.executemany("INSERT INTO subscriptions VALUES (?, ?)", sorted(rows))

    def _posts(self, db: sqlite3.Connection, rng: TaskRng) -> list[int]:
        weights = [rng.randint(2, 10) for _ in FORUMS]
        rows, votes, comment_counts = [], [], []
        for index in range(1, self.posts + 1):
            forum_id = rng.weighted_choice(range(1, len(FORUMS) + 1), weights)
            forum = FORUMS[forum_id - 1]
            words = _words(rng, forum)
            title = rng.choice(TITLE_TEMPLATES).format(**words)
            sentences = rng.sample(BODY_SENTENCES, rng.randint(1, 3))
            body = " ".join(s.format(**words) for s in sentences)
            author = 1 if index % (self.posts // self.own_posts) == 0 else _author(rng, self.users)
            created = random_datetime(rng, 2022, 2023)
            score = _score(rng)
            comments = rng.weighted_choice((0, 1, 2, 3, 5, 8, 13), (3, 4, 4, 3, 3, 2, 1))
            comment_counts.append(comments)
            rows.append(
                (
                    index,
                    forum_id,
                    author,
                    title,
                    body,
                    created,
                    score,
                    hot_rank(score, created),
                    comments,
                )
            )
            if author != 1 and rng.random() < 0.01:
                votes.append((1, index, rng.weighted_choice((1, -1), (4, 1))))
        db.executemany(
            "INSERT INTO posts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany("INSERT INTO post_votes VALUES (?, ?, ?)", votes)
        return comment_counts

    def _comments(self, db: sqlite3.Connection, rng: TaskRng, counts: list[int]) -> None:
        posts = db.execute("SELECT id, forum_id, created_at FROM posts ORDER BY id").fetchall()
        rows: list[tuple] = []
        for (post_id, forum_id, created), count in zip(posts, counts, strict=True):
            forum = FORUMS[forum_id - 1]
            thread: list[int] = []
            last = created
            for _ in range(count):
                comment_id = len(rows) + 1
                parent = rng.choice(thread) if thread and rng.random() < 0.45 else None
                words = _words(rng, forum)
                author = 1 if rng.random() < 0.004 else _author(rng, self.users)
                last = _later(rng, last)
                rows.append(
                    (
                        comment_id,
                        post_id,
                        parent,
                        author,
                        rng.choice(COMMENT_TEMPLATES).format(**words),
                        last,
                        rng.weighted_choice((-2, 0, 1, 2, 4, 9, 25), (1, 2, 6, 4, 3, 2, 1)),
                    )
                )
                thread.append(comment_id)
        db.executemany("INSERT INTO comments VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def _words(rng: TaskRng, forum: tuple[str, str, str]) -> dict[str, object]:
    """The slot values of one sentence template, from a single 64-bit draw (generation makes
    tens of thousands of sentences; one draw each keeps the build fast)."""
    nouns = forum[2].split()
    bits = rng.next_u64()
    bits, first = divmod(bits, len(nouns))
    bits, step = divmod(bits, len(nouns) - 1)
    bits, adjective = divmod(bits, len(ADJECTIVES))
    bits, years = divmod(bits, 14)
    bits, number = divmod(bits, 98)
    bits, price = divmod(bits, len(_PRICES))
    noun, other = nouns[first], nouns[(first + 1 + step) % len(nouns)]
    return {
        "noun": noun,
        "Noun": noun[:1].upper() + noun[1:],
        "other": other,
        "adj": ADJECTIVES[adjective],
        "years": years + 2,
        "number": number + 2,
        "price": _PRICES[price],
        "city": CITIES[bits % len(CITIES)],
        "forum": forum[0],
    }


_PRICES = (50, 100, 150, 200, 300, 500, 1000)


def _author(rng: TaskRng, users: int) -> int:
    # A few prolific posters, many occasional ones (as on a real forum).
    if rng.random() < 0.3:
        return rng.randint(2, 40)
    return rng.randint(2, users)


def _score(rng: TaskRng) -> int:
    magnitude = rng.weighted_choice((3, 10, 40, 150, 600, 2500), (30, 30, 20, 12, 6, 2))
    return rng.randint(-magnitude // 6, magnitude)


def _later(rng: TaskRng, created: str) -> str:
    """A time on the day of ``created`` or up to three days after, never before it."""
    day = int(created[8:10]) + rng.randint(0, 3)
    stamp = f"{created[:8]}{min(day, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    return max(stamp, created)
