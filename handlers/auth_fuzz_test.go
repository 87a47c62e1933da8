package handlers

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"acctapi/auth"
)

// FuzzAuthorization sends GET /v1/me with fuzzed Authorization headers: a
// line feed separates several, and $K and $k stand for the fixture's
// accountant and client keys. Only one header holding a valid key in the
// Bearer scheme is served; anything else is the 401 (or, once the address
// has spent its failed attempts, the 429) with the standard body, never a
// 500, and no answer holds a key's secret.
func FuzzAuthorization(f *testing.F) {
	for _, header := range []string{
		"Bearer $K", "bearer $k", "BEARER $K", "Bearer  $K", " Bearer $K\t", "Bearer $K\nBearer $K", "Bearer $K\nBearer nope",
		"Bearer nope\nBearer $K", "Bearer $K\nBearer $k", "Bearer $K\n", "\nBearer $K", "", "Basic dXNlcjpwYXNz",
		"Bearer ak_cnosuchkeynosuchkey00000_" + strings.Repeat("0", 64),
		"Bearer ak_c" + strings.Repeat("a", 100) + "_" + strings.Repeat("0", 64),
		"Bearer ak_cnosuchkey\xff_" + strings.Repeat("0", 64),
		"Bearer $K\xff", "Bearer $K\u0085",
	} {
		f.Add(header)
	}
	fx := newFuzzFixture(f)
	keys := strings.NewReplacer("$K", fx.acct, "$k", fx.cli)
	// The fixture's keys are in use before the fuzzed guesses spend the
	// address's failed attempts, as the keys of callers behind a proxy are.
	for _, key := range []string{fx.acct, fx.cli} {
		if res := fx.base.do(request{method: "GET", path: "/v1/me", key: key}); res.status != http.StatusOK {
			f.Fatalf("the fixture's key: got %d, want 200", res.status)
		}
	}
	const scheme = "Bearer "
	f.Fuzz(func(t *testing.T, header string) {
		api := fx.on(t)
		values := strings.Split(keys.Replace(header), "\n")
		if slices.ContainsFunc(values, func(v string) bool { return !validHeaderValue(v) }) {
			t.Skip("Go's HTTP client does not send this header value")
		}
		res := api.do(request{method: "GET", path: "/v1/me", header: http.Header{"Authorization": values}})
		// The server drops the blanks around a header's value.
		value := strings.Trim(values[0], " \t")
		valid := len(values) == 1 && len(value) > len(scheme) && strings.EqualFold(value[:len(scheme)], scheme) &&
			(value[len(scheme):] == fx.acct || value[len(scheme):] == fx.cli)
		if valid {
			fuzzCheckAnswer(t, api, res, []int{http.StatusOK})
		} else {
			fuzzCheckAnswer(t, api, res, []int{http.StatusUnauthorized, http.StatusTooManyRequests})
		}
		for _, key := range []string{fx.acct, fx.cli} {
			if _, secret, _ := auth.ParseKey(key); strings.Contains(string(res.body), secret) {
				t.Fatalf("Authorization %q answered %s, which holds a key's secret", values, res.body)
			}
		}
	})
}
