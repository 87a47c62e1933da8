// Package webhooks delivers outgoing webhooks: signing secrets and
// signatures in the Standard Webhooks format
// (https://www.standardwebhooks.com), the checks that keep a subscription URL
// from reaching the server's own network, the HTTP client that makes one
// delivery attempt, the retry schedule, and the Dispatcher, which delivers
// the store's outbox with them.
package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how far a webhook-timestamp may be from the receiver's clock
// before Verify refuses it, as Standard Webhooks recommends against replays.
const Tolerance = 5 * time.Minute

const (
	secretPrefix = "whsec_"
	// Standard Webhooks asks for at least 24 random bytes and allows up to 64;
	// NewSecret makes 32. The spec's own test secret has 24, so ParseSecret
	// accepts the whole range rather than only what NewSecret makes.
	minKeyLen = 24
	maxKeyLen = 64
	newKeyLen = 32
	maxIDLen  = 255
)

var (
	// ErrSecret is returned for a secret that is not "whsec_" followed by the
	// standard base64 of 24 to 64 bytes.
	ErrSecret = errors.New("invalid webhook secret")
	// ErrID is returned for a webhook id that cannot be signed unambiguously.
	ErrID = errors.New("invalid webhook id")
	// ErrTimestamp is returned by Verify for a timestamp outside Tolerance.
	ErrTimestamp = errors.New("webhook timestamp outside tolerance")
	// ErrSignature is returned by Verify when no v1 entry of the header matches.
	ErrSignature = errors.New("no matching webhook signature")
)

var b64 = base64.StdEncoding

// NewSecret returns a new signing secret: "whsec_" and the standard, padded
// base64 of 32 bytes from crypto/rand.
func NewSecret() string {
	key := make([]byte, newKeyLen)
	// crypto/rand.Read never fails (Go 1.24+): it crashes the program instead.
	rand.Read(key)
	return secretPrefix + b64.EncodeToString(key)
}

// ParseSecret checks a secret's form and returns its key bytes: the base64
// decoding of the part after "whsec_". It returns ErrSecret otherwise.
func ParseSecret(secret string) ([]byte, error) {
	enc, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: no %q prefix", ErrSecret, secretPrefix)
	}
	key, err := b64.Strict().DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64", ErrSecret)
	}
	if len(key) < minKeyLen || len(key) > maxKeyLen {
		return nil, fmt.Errorf("%w: %d key bytes, want %d to %d", ErrSecret, len(key), minKeyLen, maxKeyLen)
	}
	return key, nil
}

// Sign returns the webhook-signature header value for one secret:
// "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)), the
// timestamp in decimal unix seconds. It returns ErrSecret for a malformed
// secret and ErrID for an id that is empty, longer than 255 bytes, or holds
// anything but visible ASCII other than '.'.
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := ParseSecret(secret)
	if err != nil {
		return "", err
	}
	mac, err := signature(key, id, timestamp, body)
	if err != nil {
		return "", err
	}
	return "v1," + b64.EncodeToString(mac), nil
}

// Verify checks a webhook-signature header against a secret: the timestamp
// must be within Tolerance of now (ErrTimestamp), and one of the header's
// space-separated "v1,<base64>" entries must be the signature of id,
// timestamp and body (ErrSignature). Entries of other versions are skipped,
// as Standard Webhooks asks, and signatures are compared in constant time.
func Verify(secret, id string, timestamp int64, body []byte, signatureHeader string, now time.Time) error {
	key, err := ParseSecret(secret)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(timestamp, 0)).Abs(); d > Tolerance {
		return fmt.Errorf("%w: %s from now", ErrTimestamp, d.Round(time.Second))
	}
	want, err := signature(key, id, timestamp, body)
	if err != nil {
		return err
	}
	for _, entry := range strings.Fields(signatureHeader) {
		version, enc, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := b64.Strict().DecodeString(enc)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}

// signature is the raw HMAC of the Standard Webhooks signed content.
func signature(key []byte, id string, timestamp int64, body []byte) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil), nil
}

// checkID keeps the signed content unambiguous: Standard Webhooks warns that
// an id holding '.' could shift bytes between the id and the timestamp, and
// the id also travels as a header value.
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: length %d, want 1 to %d", ErrID, len(id), maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '.' {
			return fmt.Errorf("%w: byte %q at %d", ErrID, c, i)
		}
	}
	return nil
}
