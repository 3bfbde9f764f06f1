"""A headless Chromium for the explorer's tests: the system's (Debian's `chromium`, which `.ci/run`
installs), driven by Playwright; Playwright's own browser downloads are never used."""
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("RESTIFY_TEST_CHROMIUM", "/usr/bin/chromium"))
# Milliseconds Playwright waits for an element, a navigation or a text. They bound a hang, not a speed:
# on a machine whose cores are taken by other work Chromium's start and a page's first paint can take long.
WAIT_MS = 90_000
SCREENSHOTS = Path(os.environ.get("RESTIFY_TEST_SCREENSHOTS", Path(tempfile.gettempdir()) / "restify-explorer"))

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} "
                                    "(apt-get install chromium; .ci/run installs it)")


class Problems(list[str]):
    """What the page reported as going wrong: console errors (Content-Security-Policy violations are
    among them), uncaught exceptions, failed requests."""


@asynccontextmanager
async def browser_page() -> AsyncIterator[tuple[object, Problems]]:
    from playwright.async_api import async_playwright

    problems = Problems()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"],
                                                   timeout=WAIT_MS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(WAIT_MS)
            page.set_default_navigation_timeout(WAIT_MS)
            page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} {r.failure}"))
            yield page, problems
        finally:
            await browser.close()


async def screenshot(page: object, name: str) -> Path:
    """A screenshot for a person to look at (not compared); kept outside the repository."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=False)  # type: ignore[attr-defined]
    return path
