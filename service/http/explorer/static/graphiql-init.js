// Starts GraphiQL on the service's GraphQL endpoint: queries and mutations over HTTP, subscriptions over
// graphql-transport-ws on the same path. The headers editor's JSON (`{"Authorization": "Bearer <token>"}`)
// goes with each HTTP request and, for subscriptions, as the `connection_init` payload.
(function () {
  "use strict";
  var root = document.getElementById("graphiql");
  var endpoint = root.getAttribute("data-endpoint");
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var fetcher = GraphiQL.createFetcher({
    url: endpoint,
    subscriptionUrl: scheme + window.location.host + endpoint,
  });
  var defaultQuery = [
    "# To act as a user, enter in Headers below",
    '#   {"Authorization": "Bearer <token>"}',
    "# (a token from /api/register or /api/login).",
    "",
    "{",
    "  me {",
    "    id",
    "  }",
    "}",
    "",
  ].join("\n");
  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultQuery: defaultQuery,
    defaultEditorToolsVisibility: "headers",
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false, // a token is not left in the browser's storage
  }));
})();
