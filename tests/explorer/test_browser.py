"""The explorer in a real headless Chromium: Swagger UI authorizes with a token and runs an operation,
GraphiQL runs a query with the token in its headers; neither page reports an error (the
Content-Security-Policy's refusals would be console errors)."""
import json

from tests.explorer.browser import browser_page, needs_chromium, screenshot
from tests.live.test_graphql_ws import subscribed

pytestmark = needs_chromium


async def _user_with_a_post(api) -> dict:
    ann = await api.register("Ann")
    created = await api.post("/api/restify/posts", {"title": "Written through the API"}, token=ann["token"])
    assert created.status == 201, created.body
    return ann


async def test_swagger_ui_authorizes_and_runs_an_operation(api):
    ann = await _user_with_a_post(api)
    async with browser_page() as (page, problems):
        await page.goto(api.client.get_url("/docs"))
        await page.get_by_role("button", name="Authorize").first.click()
        dialog = page.locator(".modal-ux")
        await dialog.locator("input").fill(ann["token"])
        await dialog.get_by_role("button", name="Apply credentials").click()
        await dialog.get_by_role("button", name="Remove authorization").wait_for()  # authorized
        await dialog.get_by_role("button", name="Close").click()

        operation = page.locator(".opblock-get").filter(
            has=page.locator('.opblock-summary-path[data-path="/api/restify/posts"]'))
        await operation.locator(".opblock-summary").click()
        await operation.get_by_role("button", name="Try it out").click()
        async with page.expect_request(lambda r: r.url.split("?")[0].endswith("/api/restify/posts")) as sent:
            await operation.get_by_role("button", name="Execute").click()
        assert (await sent.value).headers.get("authorization") == f"Bearer {ann['token']}"
        body = operation.locator(".live-responses-table .response-col_description pre").filter(
            has_text="Written through the API")
        await body.wait_for()
        await operation.locator(".live-responses-table .response-col_status", has_text="200").wait_for()
        await body.scroll_into_view_if_needed()
        await screenshot(page, "docs-try-it-out")
        assert problems == []


async def _graphiql(page, url: str, token: str, query: str) -> None:
    """Opens GraphiQL, enters the token in its headers and `query`, and runs it."""
    await page.goto(url)
    # CodeMirror editors: text goes in as typed input (insert_text), which its bracket closing leaves alone.
    # The tool section holds the variables editor too, hidden while the headers tab is open.
    await page.locator('section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden)').click()
    await page.keyboard.insert_text(json.dumps({"Authorization": f"Bearer {token}"}))
    await page.locator(".graphiql-query-editor .CodeMirror").click()
    await page.keyboard.press("Control+A")
    await page.keyboard.insert_text(query)
    # GraphiQL parses the editor's text 100 ms after a change (debounced), then stores it; what runs is
    # the last text parsed, which decides whether it goes over HTTP or, a subscription, over the socket.
    await page.wait_for_function("query => localStorage.getItem('graphiql:query') === query", arg=query)
    await page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()


async def test_graphiql_runs_a_query_with_the_token_in_its_headers(api):
    ann = await _user_with_a_post(api)
    async with browser_page() as (page, problems):
        await _graphiql(page, api.client.get_url("/graphql"), ann["token"], "{ me { name } postList { title } }")
        result = page.locator("section.result-window")
        await result.filter(has_text="Written through the API").wait_for()
        text = await result.inner_text()
        assert '"name": "Ann"' in text  # the token was sent: `me` is Ann
        await screenshot(page, "graphiql-query")
        assert problems == []


async def test_graphiql_subscribes_over_the_websocket_with_the_token(api, restify):
    ann = await api.register("Ann")
    async with browser_page() as (page, problems):
        query = "subscription { postChanged { operation record { title user_id } } }"
        await _graphiql(page, api.client.get_url("/graphql"), ann["token"], query)
        await subscribed(restify, 1)  # the server holds it: a write from now on reaches it
        created = await api.post("/api/restify/posts", {"title": "Written while subscribed"}, token=ann["token"])
        assert created.status == 201, created.body
        result = page.locator("section.result-window")
        await result.filter(has_text="Written while subscribed").wait_for()
        assert '"operation": "CREATED"' in await result.inner_text()
        await screenshot(page, "graphiql-subscription")
        assert problems == []
