package certs

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestOnlyDomain(t *testing.T) {
	policy := onlyDomain("api.example.com")
	for host, ok := range map[string]bool{
		"api.example.com": true, "API.example.com": true, "api.example.com:5002": true,
		"example.com": false, "other.example.com": false, "api.example.com.evil": false,
	} {
		if err := policy(context.Background(), host); (err == nil) != ok {
			t.Errorf("onlyDomain(%q): %v, want allowed %v", host, err, ok)
		}
	}
}

// TestACMEClosed: after Close the cache neither reads nor writes its
// directory, and no request reaches the CA.
func TestACMEClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acme")
	a := NewACME(ACMEOptions{Domain: "api.example.com", Directory: "https://127.0.0.1:1/dir", CacheDir: dir, Log: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	if err := a.cache.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatalf("Put before Close: %v", err)
	}
	if got, err := a.cache.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Fatalf("Get before Close: %q, %v", got, err)
	}
	a.Close()
	if err := a.cache.Put(ctx, "late", []byte("v")); !errors.Is(err, errClosed) {
		t.Errorf("Put after Close: %v, want errClosed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Put after Close wrote into the directory: %v", err)
	}
	if _, err := a.cache.Get(ctx, "k"); !errors.Is(err, errClosed) {
		t.Errorf("Get after Close: %v, want errClosed", err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:1/dir", nil)
	if _, err := a.manager.Client.HTTPClient.Transport.RoundTrip(req); !errors.Is(err, errClosed) {
		t.Errorf("a request to the CA after Close: %v, want errClosed", err)
	}
}
