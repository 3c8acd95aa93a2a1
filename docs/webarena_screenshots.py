"""Screenshots of WebArena-v0's sites in headless Chromium for the docs (``docs/environments/img``).

    python docs/webarena_screenshots.py

Serves every site (``llmgym.envs.webarena.serve``) on ports 7770+N, signs in with the sessions
every episode starts with, and saves one page of each site as it shows at 1280x900.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from playwright.sync_api import sync_playwright  # noqa: E402

from benchmarks.bench_utils import launch_chromium  # noqa: E402
from llmgym.envs.webarena.env import START_COOKIES  # noqa: E402
from llmgym.envs.webarena.serve import serve_sites  # noqa: E402

OUT = ROOT / "docs" / "environments" / "img"
PORT_OFFSET = 1_000
SHOTS = {
    "shop": "/search?q=cat+litter",
    "admin": "/sales/orders",
    "forum": "/f/books",
    "gitlab": "/geoatlas/open-log-api/-/issues",
    "wiki": "/wiki/Chekreith",
}
"""The page shown of each site."""


def main() -> None:
    running = serve_sites(port_offset=PORT_OFFSET)
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_cookies(
                [
                    {
                        "name": name,
                        "value": value,
                        "url": f"http://127.0.0.1:{int(host.split(':')[1]) + PORT_OFFSET}/",
                    }
                    for host, jar in START_COOKIES.items()
                    for name, value in jar.items()
                ]
            )
            page = context.new_page()
            for served in running:
                path = SHOTS.get(served.site.name, "/")
                page.goto(served.url + path)
                target = OUT / f"webarena_{served.site.name}.png"
                page.screenshot(path=str(target))
                print(target.relative_to(ROOT))
            browser.close()
    finally:
        for served in running:
            served.stop()


if __name__ == "__main__":
    main()
