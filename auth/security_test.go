package auth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"regexp"
	"testing"

	"acctapi/auth"
	"acctapi/db"
)

// A key's secret is 64 lower-case hex digits: 256 bits, each of them as
// likely 0 as 1 across keys, and no two keys share a secret.
func TestKeySecretEntropy(t *testing.T) {
	const keys = 2000
	secretRE := regexp.MustCompile(`^[0-9a-f]{64}$`)
	seen := make(map[string]bool, keys)
	var ones [256]int
	for range keys {
		key, hash := auth.NewKey(db.NewID())
		_, secret, ok := auth.ParseKey(key)
		if !ok || !secretRE.MatchString(secret) {
			t.Fatalf("NewKey gave %q, want ak_<id>_<64 hex digits>", key)
		}
		if seen[secret] {
			t.Fatalf("two of %d keys share the secret %s", len(seen)+1, secret)
		}
		seen[secret] = true
		if sum := sha256.Sum256([]byte(secret)); !bytes.Equal(hash, sum[:]) {
			t.Fatalf("the stored hash of %s is not its SHA-256", secret)
		}
		raw, _ := hex.DecodeString(secret)
		for i := range ones {
			ones[i] += int(raw[i/8] >> (i % 8) & 1)
		}
	}
	// 2000 fair bits give 1000 ± 22 ones; 40% to 60% is nine deviations
	// either way: a stuck or biased bit, never chance.
	for i, n := range ones {
		if n < keys*4/10 || n > keys*6/10 {
			t.Errorf("bit %d of the secret is set in %d of %d keys, want about half", i, n, keys)
		}
	}
}

// The database holds a key's SHA-256, never the key or its secret: not in
// not in the file, not in the write-ahead log.
func TestStoredKeyIsOnlyAHash(t *testing.T) {
	c := newClock()
	d := mustOpenDB(t, c.Now)
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	keys := []string{}
	for _, spec := range []auth.KeySpec{{}, {ClientID: client.ID}} {
		key, _ := mustMintKey(t, d, firm.ID, spec)
		keys = append(keys, key)
	}

	raw, err := sql.Open("sqlite", "file:"+d.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var files []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(d.Path() + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		files = append(files, b...)
	}
	for _, key := range keys {
		id, secret, _ := auth.ParseKey(key)
		rawSecret, _ := hex.DecodeString(secret)
		sum := sha256.Sum256([]byte(secret))
		var stored []byte
		if err := raw.QueryRowContext(context.Background(), `SELECT secret_hash FROM api_keys WHERE id = ?`, id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stored, sum[:]) {
			t.Errorf("key %s: secret_hash is %x, want the SHA-256 of the secret %x", id, stored, sum)
		}
		// The scan sees what the database wrote: the hash is there.
		if !bytes.Contains(files, sum[:]) {
			t.Fatalf("key %s: the database files do not hold its hash; the scan below proves nothing", id)
		}
		for what, s := range map[string][]byte{"key": []byte(key), "secret": []byte(secret), "secret's bytes": rawSecret} {
			if bytes.Contains(files, s) {
				t.Errorf("key %s: the database files hold its %s", id, what)
			}
		}
	}
}
