package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Errors of Verify.
var (
	ErrInvalidSignature = errors.New("invalid signature")
	ErrLinkExpired      = errors.New("link expired")
)

// LinkLifetime is how long a download link works.
const LinkLifetime = 10 * time.Minute

// SecretStore holds the link-signing secrets: the current one, and the one
// it replaced (nil before the first rotation).
type SecretStore interface {
	LinkSigningSecrets(ctx context.Context) (current, previous []byte, err error)
}

// Signer signs and verifies download links: an HMAC-SHA256 over the file id
// and the expiry, so that changing either breaks the signature. It reads its
// secrets from the store at most once a second, so that a rotation made by
// the CLI in another process takes effect within a second.
type Signer struct {
	store SecretStore
	now   func() time.Time

	mu       sync.Mutex
	current  []byte
	previous []byte
	fetched  time.Time
}

// NewSigner returns a Signer on the secrets of store and the clock now
// (time.Now when nil).
func NewSigner(store SecretStore, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{store: store, now: now}
}

// NewSecret returns a new 32-byte link-signing secret.
func NewSecret() []byte {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return secret
}

// Sign returns the expiry (unix seconds) and the hex signature of a link to
// the file that works for LinkLifetime.
func (s *Signer) Sign(ctx context.Context, fileID string) (expires int64, signature string, err error) {
	current, _, err := s.secrets(ctx)
	if err != nil {
		return 0, "", err
	}
	expires = s.now().Add(LinkLifetime).Unix()
	return expires, hex.EncodeToString(mac(current, fileID, expires)), nil
}

// Verify checks a link's signature, in constant time, against the current
// and the previous secret, then its expiry. A bad signature is reported
// before the expiry, so that an expired link reveals nothing unless genuine.
func (s *Signer) Verify(ctx context.Context, fileID string, expires int64, signature string) error {
	got, err := hex.DecodeString(signature)
	if err != nil || len(got) != sha256.Size {
		return ErrInvalidSignature
	}
	current, previous, err := s.secrets(ctx)
	if err != nil {
		return err
	}
	valid := hmac.Equal(got, mac(current, fileID, expires))
	if previous != nil && hmac.Equal(got, mac(previous, fileID, expires)) {
		valid = true
	}
	if !valid {
		return ErrInvalidSignature
	}
	if s.now().Unix() >= expires {
		return ErrLinkExpired
	}
	return nil
}

// mac is the signature of the canonical payload: purpose, file id, expiry.
func mac(secret []byte, fileID string, expires int64) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("acctapi file download\n" + fileID + "\n" + strconv.FormatInt(expires, 10)))
	return h.Sum(nil)
}

func (s *Signer) secrets(ctx context.Context) (current, previous []byte, err error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil && now.Sub(s.fetched) < cacheTTL && !now.Before(s.fetched) {
		return s.current, s.previous, nil
	}
	current, previous, err = s.store.LinkSigningSecrets(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.current, s.previous, s.fetched = current, previous, now
	return current, previous, nil
}
