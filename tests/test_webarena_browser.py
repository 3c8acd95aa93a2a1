"""WebArena-v0's sites in a real browser: headless Chromium renders the served pages, and every
element the environment's accessibility tree lists is in Chromium's own accessibility tree,
with the same role and name."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks.bench_utils import CHROMIUM, launch_chromium
from llmgym.envs.webarena.browser import Browser
from llmgym.envs.webarena.env import START_COOKIES
from llmgym.envs.webarena.serve import serve_sites
from llmgym.envs.webarena.sites import Web, site_class
from tests.extras import need

PAGES = {
    "shop": [
        "/",
        "/search?q=cat+litter&sort=price_asc",
        "/product/7",
        "/category/2",
        "/account",
        "/account/orders",
        "/checkout",
        "/wishlist",
    ],
    "admin": [
        "/",
        "/sales/orders?status=pending",
        "/sales/order/2990",
        "/catalog/products",
        "/catalog/product/7",
        "/customers",
        "/customer/2",
        "/reviews?status=Pending",
        "/reports/bestsellers",
        "/reports/sales",
    ],
    "forum": ["/", "/all?sort=new", "/forums", "/f/books", "/search?q=review", "/submit"],
    "gitlab": [
        "/",
        "/explore/projects",
        "/dashboard/issues",
        "/geoatlas/open-log-api",
        "/geoatlas/open-log-api/-/issues",
        "/geoatlas/open-log-api/-/merge_requests",
        "/geoatlas/open-log-api/-/project_members",
    ],
    "wiki": ["/", "/wiki/Chekreith", "/search?q=river"],
}
ROLES = (
    "link",
    "button",
    "textbox",
    "combobox",
    "option",
    "heading",
    "checkbox",
    "radio",
    "cell",
    "columnheader",
    "table",
    "row",
    "list",
    "listitem",
    "navigation",
)

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def chromium():
    sync_api = need("playwright.sync_api")
    web = Web(0)
    running = serve_sites(port_offset=None, web=web)
    served = {site.site.port: site.url for site in running}
    with sync_api.sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_cookies(
            [
                {"name": name, "value": value, "url": served[int(host.split(":")[1])] + "/"}
                for host, jar in START_COOKIES.items()
                for name, value in jar.items()
            ]
        )
        yield web, {running_site.site.name: running_site.url for running_site in running}, context
        browser.close()
    for running_site in running:
        running_site.stop()


@pytest.mark.slow
@pytest.mark.parametrize("site", sorted(PAGES))
def test_chromium_renders_every_element_the_tree_lists(chromium, site: str) -> None:
    web, urls, context = chromium
    page = context.new_page()
    ours = Browser(web.site_at, viewport_lines=10_000)
    for path in PAGES[site]:
        ours.start(f"http://localhost:{site_class(site).port}{path}", START_COOKIES)
        response = page.goto(urls[site] + path)
        assert response is not None and response.status == 200, path
        assert page.title() == ours.visit.page.title, path
        wanted = Counter(
            (node.role, node.name) for node in ours.visit.page.nodes if node.role in ROLES
        )
        assert wanted, path
        for (role, name), count in wanted.items():
            found = (
                page.get_by_role(role, name=name, exact=True).count()
                if name
                else (page.get_by_role(role).count())
            )
            assert found >= count, f"{path}: Chromium has {found} {role} {name!r}, the tree {count}"
        texts = [node.name for node in ours.visit.page.nodes if node.role == "StaticText"]
        for text in texts[:40]:
            if text:
                assert page.get_by_text(text, exact=False).count() >= 1, f"{path}: {text!r}"
    page.close()
