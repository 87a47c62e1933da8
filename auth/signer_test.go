package auth_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// secretStore is a SecretStore in memory that counts its reads.
type secretStore struct {
	mu                sync.Mutex
	current, previous []byte
	err               error
	reads             int
}

func (s *secretStore) LinkSigningSecrets(context.Context) ([]byte, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.err != nil {
		return nil, nil, s.err
	}
	return s.current, s.previous, nil
}

func (s *secretStore) rotate(secret []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current, s.previous = secret, s.current
}

func (s *secretStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// linkMAC is the documented signature: HMAC-SHA256 over the purpose, the
// file id and the expiry.
func linkMAC(secret []byte, fileID string, expires int64) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("acctapi file download\n" + fileID + "\n" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(h.Sum(nil))
}

const signedFile = "cfilefilefilefilefile0001"

func mustSign(t *testing.T, s *auth.Signer, fileID string) (int64, string) {
	t.Helper()
	expires, sig, err := s.Sign(context.Background(), fileID)
	if err != nil {
		t.Fatalf("Sign(%s): %v", fileID, err)
	}
	return expires, sig
}

func wantVerify(t *testing.T, s *auth.Signer, fileID string, expires int64, sig string, want error) {
	t.Helper()
	if err := s.Verify(context.Background(), fileID, expires, sig); !errors.Is(err, want) || (want == nil && err != nil) {
		t.Errorf("Verify(%s, %d, %q): got %v, want %v", fileID, expires, sig, err, want)
	}
}

func TestSignerSignVerify(t *testing.T) {
	c := newClock()
	secret := bytes.Repeat([]byte{7}, 32)
	store := &secretStore{current: secret}
	s := auth.NewSigner(store, c.Now)

	expires, sig := mustSign(t, s, signedFile)
	if want := c.Now().Add(10 * time.Minute).Unix(); expires != want {
		t.Errorf("expires: got %d, want %d (now + 600 s)", expires, want)
	}
	if want := linkMAC(secret, signedFile, expires); sig != want {
		t.Errorf("signature: got %s, want %s", sig, want)
	}
	if auth.LinkLifetime != 600*time.Second {
		t.Errorf("LinkLifetime: got %v, want 10m", auth.LinkLifetime)
	}
	wantVerify(t, s, signedFile, expires, sig, nil)

	flip := func(sig string, i int) string {
		b := []byte(sig)
		b[i] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", b[i])+1)%16]
		return string(b)
	}
	for _, tc := range []struct {
		name    string
		fileID  string
		expires int64
		sig     string
	}{
		{"another file id", "cfilefilefilefilefile0002", expires, sig},
		{"file id with a suffix", signedFile + "0", expires, sig},
		{"expiry + 1", signedFile, expires + 1, sig},
		{"expiry - 1", signedFile, expires - 1, sig},
		{"expiry far out", signedFile, expires + 365*24*3600, sig},
		{"first digit changed", signedFile, expires, flip(sig, 0)},
		{"last digit changed", signedFile, expires, flip(sig, 63)},
		{"not hex", signedFile, expires, "zz" + sig[2:]},
		{"empty", signedFile, expires, ""},
		{"one byte short", signedFile, expires, sig[:62]},
		{"odd length", signedFile, expires, sig[:63]},
		{"one byte long", signedFile, expires, sig + "00"},
		{"twice", signedFile, expires, sig + sig},
		{"another secret's", signedFile, expires, linkMAC(bytes.Repeat([]byte{8}, 32), signedFile, expires)},
		{"id and expiry run together", signedFile + "\n1", expires, linkMAC(secret, signedFile, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantVerify(t, s, tc.fileID, tc.expires, tc.sig, auth.ErrInvalidSignature)
		})
	}

	t.Run("expiry", func(t *testing.T) {
		c.Advance(599 * time.Second)
		wantVerify(t, s, signedFile, expires, sig, nil)
		c.Advance(time.Second) // now == expires
		wantVerify(t, s, signedFile, expires, sig, auth.ErrLinkExpired)
		c.Advance(time.Hour)
		wantVerify(t, s, signedFile, expires, sig, auth.ErrLinkExpired)
		// The signature is checked before the expiry.
		wantVerify(t, s, signedFile, expires, flip(sig, 10), auth.ErrInvalidSignature)
		wantVerify(t, s, signedFile, expires, "nothex", auth.ErrInvalidSignature)
		c.Advance(-time.Hour - 600*time.Second)
	})
}

func TestSignerSecretCache(t *testing.T) {
	c := newClock()
	store := &secretStore{current: bytes.Repeat([]byte{1}, 32)}
	s := auth.NewSigner(store, c.Now)
	expires, sig := mustSign(t, s, signedFile)
	wantVerify(t, s, signedFile, expires, sig, nil)
	if n := store.readCount(); n != 1 {
		t.Errorf("reads after a Sign and a Verify within a second: got %d, want 1", n)
	}
	// A malformed signature is refused without a read.
	wantVerify(t, s, signedFile, expires, "x", auth.ErrInvalidSignature)

	store.rotate(bytes.Repeat([]byte{2}, 32))
	c.Advance(999 * time.Millisecond)
	if _, got := mustSign(t, s, signedFile); got != linkMAC(bytes.Repeat([]byte{1}, 32), signedFile, c.Now().Add(auth.LinkLifetime).Unix()) {
		t.Errorf("within a second of the last read, Sign used a secret it had not read yet")
	}
	if n := store.readCount(); n != 1 {
		t.Errorf("reads within a second: got %d, want 1", n)
	}
	c.Advance(time.Millisecond) // a second after the read
	newExpires, newSig := mustSign(t, s, signedFile)
	if n := store.readCount(); n != 2 {
		t.Errorf("reads a second later: got %d, want 2", n)
	}
	if newSig != linkMAC(bytes.Repeat([]byte{2}, 32), signedFile, newExpires) {
		t.Errorf("a second after a rotation, Sign does not use the new secret")
	}
	wantVerify(t, s, signedFile, expires, sig, nil) // the previous secret's link

	t.Run("clock going back re-reads", func(t *testing.T) {
		before := store.readCount()
		c.Advance(-time.Minute)
		mustSign(t, s, signedFile)
		if n := store.readCount(); n != before+1 {
			t.Errorf("reads after the clock went back: got %d, want %d", n, before+1)
		}
		c.Advance(time.Minute)
	})
	t.Run("store errors", func(t *testing.T) {
		boom := errors.New("disk I/O error")
		store := &secretStore{err: boom}
		s := auth.NewSigner(store, c.Now)
		if _, _, err := s.Sign(context.Background(), signedFile); !errors.Is(err, boom) {
			t.Errorf("Sign: got %v, want the store's error", err)
		}
		err := s.Verify(context.Background(), signedFile, expires, sig)
		if !errors.Is(err, boom) || errors.Is(err, auth.ErrInvalidSignature) {
			t.Errorf("Verify: got %v, want the store's error, not ErrInvalidSignature", err)
		}
		// An error is not cached.
		store.mu.Lock()
		store.err, store.current = nil, bytes.Repeat([]byte{1}, 32)
		store.mu.Unlock()
		wantVerify(t, s, signedFile, expires, sig, nil)
	})
}

func TestSignerRotationWithStore(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDB(t, c.Now)
	s := auth.NewSigner(d, c.Now)

	if _, _, err := s.Sign(ctx, signedFile); db.ErrorCode(err) != db.ENOTFOUND {
		t.Fatalf("Sign before a secret exists: got %v, want ENOTFOUND", err)
	}
	if err := d.InitLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	exp0, sig0 := mustSign(t, s, signedFile)
	wantVerify(t, s, signedFile, exp0, sig0, nil)

	// A second signer, as in a restarted process, verifies the same links:
	// the secret is the database's.
	if err := d.InitLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	wantVerify(t, auth.NewSigner(d, c.Now), signedFile, exp0, sig0, nil)

	if err := d.RotateLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	// Within the second the signer still signs with what it read.
	if _, sig := mustSign(t, s, signedFile); sig != sig0 {
		t.Errorf("within a second of a rotation the signer changed secret")
	}
	c.Advance(1100 * time.Millisecond)
	exp1, sig1 := mustSign(t, s, signedFile)
	if sig1 == linkMAC(mustSecrets(t, d, 1), signedFile, exp1) {
		t.Errorf("after a rotation the signer still signs with the previous secret")
	}
	if sig1 != linkMAC(mustSecrets(t, d, 0), signedFile, exp1) {
		t.Errorf("after a rotation the signer does not sign with the current secret")
	}
	wantVerify(t, s, signedFile, exp0, sig0, nil) // previous secret
	wantVerify(t, s, signedFile, exp1, sig1, nil)

	if err := d.RotateLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	wantVerify(t, s, signedFile, exp0, sig0, nil) // not reloaded yet
	c.Advance(1100 * time.Millisecond)
	exp2, sig2 := mustSign(t, s, signedFile)
	wantVerify(t, s, signedFile, exp0, sig0, auth.ErrInvalidSignature) // two rotations ago
	wantVerify(t, s, signedFile, exp1, sig1, nil)
	wantVerify(t, s, signedFile, exp2, sig2, nil)

	// Links of the previous secret still expire.
	c.Advance(time.Duration(exp1-c.Now().Unix()) * time.Second)
	wantVerify(t, s, signedFile, exp1, sig1, auth.ErrLinkExpired)
	wantVerify(t, s, signedFile, exp2, sig2, nil)
}

// mustSecrets returns the current (which 0) or previous (which 1) secret.
func mustSecrets(t *testing.T, d *db.DB, which int) []byte {
	t.Helper()
	current, previous, err := d.LinkSigningSecrets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if which == 0 {
		return current
	}
	return previous
}

func TestNewSecret(t *testing.T) {
	a, b := auth.NewSecret(), auth.NewSecret()
	if len(a) != 32 || len(b) != 32 {
		t.Errorf("lengths %d and %d, want 32", len(a), len(b))
	}
	if bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 32)) {
		t.Errorf("NewSecret returned %x and %x", a, b)
	}
}
