// Renders the document this server serves with Swagger UI. It is a file of
// its own, not an inline script, so that the page's Content-Security-Policy
// allows scripts from the server only.
window.ui = SwaggerUIBundle({
  // Relative to /v1/docs: the document at /v1/openapi.json.
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  // Swagger UI would otherwise ask validator.swagger.io about the document.
  validatorUrl: null,
});
