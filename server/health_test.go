package server

import "testing"

func TestLocalHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/v1/health",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/v1/health",
		"[::]:8080":      "http://[::1]:8080/v1/health",
		"10.0.0.5:9000":  "http://10.0.0.5:9000/v1/health",
		"localhost:8080": "http://localhost:8080/v1/health",
	} {
		if got, err := LocalHealthURL(addr); err != nil || got != want {
			t.Errorf("LocalHealthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}
