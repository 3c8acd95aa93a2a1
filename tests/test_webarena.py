"""WebArena-v0: the sites, the accessibility tree, the browser's grammar, the evaluators, the
per-episode reset, and every template's oracle (also against a forged answer key)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
import socket
import subprocess
import sys

import httpx
import pytest

from llmgym.envs.webarena.axtree import parse_page
from llmgym.envs.webarena.browser import Browser, parse_action
from llmgym.envs.webarena.env import START_COOKIES, WebArenaEnv, instances
from llmgym.envs.webarena.serve import serve_sites
from llmgym.envs.webarena.shop_data import ShopData
from llmgym.envs.webarena.sites import SITE_CLASSES, Web
from llmgym.envs.webarena.tasks import (
    Data,
    Instance,
    ProgramCheck,
    StringMatch,
    UrlMatch,
    normalize_answer,
    template,
    templates,
)
from llmgym.envs.webarena.web import MAX_SEARCH_CHARS


@pytest.fixture(scope="module")
def env() -> WebArenaEnv:
    return WebArenaEnv()


def _browser(url: str = "http://localhost:7770/") -> Browser:
    browser = Browser(Web(0).site_at, viewport_lines=400)
    browser.start(url, START_COOKIES)
    return browser


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


# ---------------------------------------------------------------------------- the tree
def test_the_tree_names_elements_by_role_and_text_and_flattens_containers() -> None:
    html = (
        "<title>T</title><header><a href='/a'>My <b>Orders</b></a></header>"
        "<main><div><h1>Hello &amp; welcome</h1><p>Some text</p>"
        "<form action='/s'><input type='hidden' name='k' value='v'>"
        "<input name='q' aria-label='Search' value='x'><select name='s' aria-label='Sort'>"
        "<option value='a'>A</option><option value='b' selected>B</option></select>"
        "<button type='submit'>Go</button></form>"
        "<table><tr><th>Name</th></tr><tr><td><a href='/p'>Pen</a></td></tr></table></div></main>"
    )
    page = parse_page(html)
    lines = [text for _, text in page.lines(page.fresh_state())]
    assert lines == [
        "[1] RootWebArea 'T' focused: True",
        "\t[2] banner ''",
        "\t\t[3] link 'My Orders'",
        "\t[4] main ''",
        "\t\t[5] heading 'Hello & welcome'",
        "\t\t[6] StaticText 'Some text'",
        "\t\t[7] textbox 'Search' required: False",
        "\t\t\t[8] StaticText 'x'",
        "\t\t[9] combobox 'Sort' hasPopup: menu expanded: False",
        "\t\t\t[10] option 'A' selected: False",
        "\t\t\t[11] option 'B' selected: True",
        "\t\t[12] button 'Go'",
        "\t\t[13] table ''",
        "\t\t\t[14] row ''",
        "\t\t\t\t[15] columnheader 'Name'",
        "\t\t\t[16] row ''",
        "\t\t\t\t[17] cell 'Pen'",
        "\t\t\t\t\t[18] link 'Pen'",
    ]
    assert page.forms[0].hidden == (("k", "v"),) and page.forms[0].fields == (7, 9, 12)


# ---------------------------------------------------------------------------- the grammar
@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("click [12]", ("click", ("12",))),
        ("Let's think.\n```type [8] [cat litter] [0]```", ("type", ("8", "cat litter", "0"))),
        ("type [8] [a ] b]", ("type", ("8", "a ] b", ""))),
        ("```stop [$12.99]``` and more ```click [3]```", ("stop", ("$12.99",))),
        ("press [Control+a]", ("press", ("Control+a",))),
        ("scroll [down]", ("scroll", ("down",))),
        ("tab_focus [1]", ("tab_focus", ("1",))),
        ("go_back", ("go_back", ())),
        ("click 12", None),
        ("click [12] please", None),
        ("```python\nclick [1]\n```", None),
    ],
)
def test_actions_parse_from_a_fenced_block_or_bare(text: str, parsed: tuple | None) -> None:
    assert parse_action(text) == parsed


def test_forms_search_sort_and_paginate_like_a_real_site() -> None:
    browser = _browser()
    page = browser.visit.page
    search = next(n for n in page.nodes if n.role == "textbox" and n.name.startswith("Search"))
    assert browser.act("type", (str(search.id), "cat litter", "1")).ok
    assert browser.url == "http://localhost:7770/search?q=cat+litter"
    page = browser.visit.page
    count = next(n.name for n in page.nodes if n.name.endswith(" items"))
    sort = next(n for n in page.nodes if n.role == "combobox" and n.name == "Sort By")
    cheapest = next(n for n in page.nodes if n.role == "option" and n.name.startswith("Price: Low"))
    browser.act("click", (str(cheapest.id),))
    apply = next(n for n in page.nodes if n.role == "button" and n.name == "Apply")
    browser.act("click", (str(apply.id),))
    assert "sort=price_asc" in browser.url and sort.name == "Sort By"
    prices = [
        float(n.name[1:])
        for n in browser.visit.page.nodes
        if n.role == "StaticText" and n.name.startswith("$")
    ]
    assert prices == sorted(prices) and len(prices) == 12
    assert next(n.name for n in browser.visit.page.nodes if n.name.endswith(" items")) == count
    following = next(n for n in browser.visit.page.nodes if n.role == "link" and n.name == "Next")
    browser.act("click", (str(following.id),))
    assert "page=2" in browser.url and "sort=price_asc" in browser.url
    assert browser.act("go_back", ()).ok and "page=2" not in browser.url
    assert browser.act("go_forward", ()).ok and "page=2" in browser.url
    assert not browser.act("go_forward", ()).ok


def test_ids_out_of_view_tabs_and_bad_targets_are_refused_with_reasons() -> None:
    browser = Browser(Web(0).site_at, viewport_lines=20)
    browser.start("http://localhost:7770/", START_COOKIES)
    last = browser.visit.page.nodes[-1].id
    assert "scroll [down]" in browser.act("click", (str(last),)).error
    assert "no element" in browser.act("click", ("99999",)).error
    assert "not a text box" in browser.act("type", ("3", "x", "1")).error
    assert "only tab" in browser.act("close_tab", ()).error
    assert "Cannot reach" in browser.act("goto", ("http://example.com/",)).error
    assert browser.act("new_tab", ()).ok and browser.url == "about:blank"
    assert browser.act("tab_focus", ("0",)).ok and browser.url == "http://localhost:7770/"
    assert "no tab 5" in browser.act("tab_focus", ("5",)).error
    assert browser.act("scroll", ("down",)).ok and browser.window()[1] > 0


# ---------------------------------------------------------------------------- evaluators
_NOWHERE = Instance("shop/product-price", "", "", {}, ())


def _passes(evaluator, answer: str | None = "", url: str = "") -> bool:
    return evaluator.passes(answer, url, Data.pristine(0), _NOWHERE)


def test_string_match_normalises_and_fuzzy_knows_not_available() -> None:
    assert normalize_answer(' "$1,234.50." ') == "1234.50"
    assert _passes(StringMatch(exact="Pending"), "pending")
    assert _passes(StringMatch(must_include=("12.99",)), "It costs $12.99.")
    assert not _passes(StringMatch(must_include=("12.99",)), "12.98")
    assert _passes(StringMatch(fuzzy="N/A"), "not available")
    assert not _passes(StringMatch(fuzzy="N/A"), "12.99")
    assert _passes(StringMatch(fuzzy="Blue Pen by Acme"), "blue pen by acme.")
    assert not _passes(StringMatch(exact="3"), None)


def test_url_match_wants_the_path_and_every_reference_parameter() -> None:
    match = UrlMatch("http://localhost:7770/category/5?sort=price_desc")
    assert _passes(match, url="http://localhost:7770/category/5?q=&sort=price_desc&page=1")
    assert not _passes(match, url="http://localhost:7770/category/5?sort=name")
    assert not _passes(match, url="http://localhost:7770/category/6?sort=price_desc")


# ---------------------------------------------------------------------------- tasks and oracles
def test_splits_are_disjoint_and_large_enough() -> None:
    split = instances(0, 40, 10)
    train, evaluation = split["train"].values(), split["eval"].values()
    assert not {i.key for i in train} & {i.key for i in evaluation}
    assert len(train) + len(evaluation) >= 500
    assert len(templates()) >= 20
    kinds = {type(e) for i in evaluation for e in i.evaluators}
    assert kinds == {StringMatch, UrlMatch, ProgramCheck}


def test_a_templates_task_ids_do_not_depend_on_the_other_templates() -> None:
    ids = instances(0, 40, 10)["eval"]
    for task_id, instance in ids.items():
        number = int(task_id.split("/")[1])
        assert template(instance.template).slot == number // 1000
    assert len({t.slot for t in templates()}) == len(templates())


def _first_eval_task(env: WebArenaEnv, template_id: str) -> str:
    chosen = instances(0, 40, 10)["eval"]
    return next(task_id for task_id, i in chosen.items() if i.template == template_id)


def _forged(instance: Instance) -> Instance:
    forged = []
    for evaluator in instance.evaluators:
        if isinstance(evaluator, StringMatch):
            forged.append(StringMatch(exact="forged answer 4711"))
        elif isinstance(evaluator, UrlMatch):
            forged.append(UrlMatch("http://localhost:7770/forged"))
        else:
            forged.append(evaluator)
    reference = {
        key: value + 1 if isinstance(value, int) else f"forged {value}"
        for key, value in instance.reference.items()
    }
    return dataclasses.replace(instance, evaluators=tuple(forged), reference=reference)


@pytest.mark.parametrize("template_id", [t.id for t in templates()])
def test_the_oracle_solves_each_template_and_never_reads_the_answer_key(
    env: WebArenaEnv, template_id: str
) -> None:
    task_id = _first_eval_task(env, template_id)
    actions, info = _play(env, task_id)
    assert info["success"], (task_id, actions, info)
    instance = env.instance
    forged_actions, forged_info = _play(env, task_id, _forged(instance))
    assert forged_actions == actions
    if instance.reference or not any(isinstance(e, ProgramCheck) for e in instance.evaluators):
        assert not forged_info["success"], (task_id, forged_info)


def test_reset_restores_the_data_and_copies_carry_the_changes(env: WebArenaEnv) -> None:
    task_id = _first_eval_task(env, "shop/add-to-cart")
    env.reset(options={"task_id": task_id})
    while not env.web.database(ShopData).dirty:
        env.step(env.oracle_action())
    cart = "SELECT count(*) FROM cart_items"
    for copied in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert copied.web.connection(ShopData).execute(cart).fetchone()[0] == 1
        assert copied.oracle_action() == env.oracle_action()
    env.reset(options={"task_id": task_id})
    assert env.web.connection(ShopData).execute(cart).fetchone()[0] == 0
    assert not env.web.database(ShopData).dirty


# ---------------------------------------------------------------------------- real HTTP
def test_the_served_sites_answer_over_http_with_sessions_redirects_and_errors() -> None:
    running = serve_sites(("shop", "admin"), port_offset=None)
    try:
        shop, admin = (served.url for served in running)
        with httpx.Client(base_url=shop) as client:
            assert "One Stop Market" in client.get("/").text
            assert client.get("/account").headers["location"] == "/login"
            assert client.get("/no/such/page").status_code == 404
            assert client.post("/").status_code == 405
            signed_in = client.post(
                "/login", data={"email": "emma.lopez@example.com", "password": "Password.123"}
            )
            assert signed_in.status_code == 303 and "shop_sid" in client.cookies
            assert "Emma Lopez" in client.get("/account").text
            added = client.post("/cart/add", data={"product_id": "5", "qty": "2"})
            assert added.status_code == 303
            assert client.post("/cart/add", data={"product_id": "x' OR 1"}).status_code == 404
            huge = client.post("/cart/add", content=b"q=" + b"x" * 2_000_000)
            assert huge.status_code == 413
            assert "My Cart (2)" in client.get("/cart").text
        with httpx.Client(base_url=admin) as client:
            assert client.get("/sales/orders").headers["location"] == "/login"
            client.post("/login", data={"username": "admin", "password": "admin1234"})
            assert "3000 records found" in client.get("/sales/orders").text
    finally:
        for served in running:
            served.stop()


def test_admin_searches_of_50000_characters_answer_a_page() -> None:
    (admin,) = serve_sites(("admin",), port_offset=None)
    try:
        with httpx.Client(base_url=admin.url, timeout=60) as client:
            client.post("/login", data={"username": "admin", "password": "admin1234"})
            for path in ("/sales/orders", "/customers", "/reviews", "/catalog/products"):
                for keyword in ("x" * 50_000, "7" * 50_000, "%_" * 5_000):
                    page = client.get(path, params={"q": keyword})
                    assert page.status_code == 200, (path, page.text[-300:])
                    assert "records found" in page.text
                    assert f'value="{keyword[:MAX_SEARCH_CHARS]}"' in page.text
    finally:
        admin.stop()


def _free_port_offset() -> int:
    """An offset at which every site's port is free on 127.0.0.1 (now)."""
    for offset in range(20_000, 40_000, 137):
        try:
            for cls in SITE_CLASSES:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", cls.port + offset))
        except OSError:
            continue
        return offset
    raise RuntimeError("no free port offset")


def test_webarena_serve_prints_a_working_login_for_every_site_with_a_sign_in_page() -> None:
    offset = _free_port_offset()
    command = [sys.executable, "-m", "llmgym", "webarena", "serve", "--port-offset", str(offset)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        lines = [process.stdout.readline() for _ in SITE_CLASSES]
        assert process.stdout.readline() == "serving; Ctrl-C stops\n"
        printed = {}
        for line in lines:
            url, login = re.fullmatch(r".*? (http://\S+)/ *(.*)\n", line).groups()
            printed[int(url.rsplit(":", 1)[1]) - offset] = (url, login)
        for cls in SITE_CLASSES:
            url, login = printed[cls.port]
            with httpx.Client(base_url=url, timeout=60) as client:
                form = client.get(cls.login_path)
                if 'type="password"' not in form.text:
                    assert form.status_code == 404 and not login, cls.name
                    continue
                assert login, f"{cls.name} has a sign-in page but no login was printed"
                user, password = login.split(" / ")
                sign_in_form = re.search(r'<form[^>]*method="post".*?</form>', form.text).group()
                (field,) = set(re.findall(r'name="(\w+)"', sign_in_form)) - {"password"}
                wrong = client.post(cls.login_path, data={field: user, "password": "x"})
                assert wrong.status_code == 200 and not client.cookies.get(f"{cls.name}_sid")
                signed_in = client.post(cls.login_path, data={field: user, "password": password})
                assert signed_in.status_code == 303 and client.cookies[f"{cls.name}_sid"]
                landing = client.get(signed_in.headers["location"], follow_redirects=True)
                assert re.search(r'href="(/logout|/users/sign_out)"', landing.text), cls.name
    finally:
        process.terminate()
        process.wait(timeout=30)
