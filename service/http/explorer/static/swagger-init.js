// Starts Swagger UI on the page's own OpenAPI document. A file, not an inline script: the page's
// Content-Security-Policy allows scripts from the service only.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-document"),
    domNode: root,
    deepLinking: true,
    validatorUrl: null, // the default sends the document to validator.swagger.io
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
