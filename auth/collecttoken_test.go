package auth_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"acctapi/auth"
)

func TestCollectToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		token, hash, err := auth.NewCollectToken()
		if err != nil {
			t.Fatalf("NewCollectToken: got %v, want nil", err)
		}
		if len(token) != auth.CollectTokenLength {
			t.Fatalf("token length: got %d, want %d (%q)", len(token), auth.CollectTokenLength, token)
		}
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || len(raw) != 32 {
			t.Fatalf("token %q: got %d bytes (%v), want 32 bytes of unpadded URL-safe base64", token, len(raw), err)
		}
		if !auth.ValidCollectToken(token) {
			t.Errorf("ValidCollectToken(%q): got false, want true", token)
		}
		sum := sha256.Sum256([]byte(token))
		if !bytes.Equal(hash, sum[:]) {
			t.Errorf("hash of %q: got %x, want its SHA-256 %x", token, hash, sum)
		}
		if !bytes.Equal(auth.HashCollectToken(token), hash) {
			t.Errorf("HashCollectToken(%q): got %x, want the hash NewCollectToken gave, %x", token, auth.HashCollectToken(token), hash)
		}
		if seen[token] {
			t.Fatalf("NewCollectToken gave %q twice", token)
		}
		seen[token] = true
	}

	token, _, err := auth.NewCollectToken()
	if err != nil {
		t.Fatalf("NewCollectToken: got %v, want nil", err)
	}
	for _, bad := range []string{
		"",
		token[:42],
		token + "A",
		token[:42] + "=",
		token[:42] + "+",
		token[:42] + "/",
		token[:42] + ".",
		token[:42] + "é"[:1],
		strings.Repeat("%", 43),
	} {
		if auth.ValidCollectToken(bad) {
			t.Errorf("ValidCollectToken(%q): got true, want false", bad)
		}
	}
}
