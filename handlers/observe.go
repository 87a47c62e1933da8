package handlers

import "time"

// RequestObserver is told of every request the handler serves, for the
// metrics: RequestStarted when one comes in, RequestDone when it has been
// answered. route is the route's template as the route table writes it
// ("/v1/tasks/:id"), or "unmatched" for a request no route took (a 404 or
// 405 of the router), so that no id or other text of the request reaches
// it; status is the one the request log shows (499 for a caller that hung
// up first). Both run on every request and must not block.
type RequestObserver interface {
	RequestStarted()
	RequestDone(method, route string, status int, took time.Duration)
}

// hstsHeader is the Strict-Transport-Security of an HTTPS server: browsers
// keep to HTTPS for a year. No includeSubDomains: the firm's other hosts
// are not ours to decide for.
var hstsHeader = []string{"max-age=31536000"}
