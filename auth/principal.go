package auth

import (
	"context"
	"errors"
	"sync"
	"time"

	"acctapi/db"
)

// Principal is who a request acts as: the key that authenticated it.
type Principal struct {
	KeyID           string
	Kind            Kind
	FirmID          string
	ClientID        string // set for client keys only
	Permissions     []Permission
	RateLimitMax    int
	RateLimitWindow time.Duration
}

// Can reports whether the principal holds the permission.
func (p *Principal) Can(perm Permission) bool {
	return contains(p.Permissions, perm)
}

// ErrUnauthorized is returned for a missing, malformed, unknown, revoked or
// expired key: the caller learns only that the key does not work.
var ErrUnauthorized = errors.New("unauthorized")

// KeyStore finds stored keys by id.
type KeyStore interface {
	FindAPIKey(ctx context.Context, id string) (*db.APIKey, error)
}

// cacheTTL bounds how long a key is trusted without a fresh read: a key
// revoked from the CLI, in another process, stops working within it. An id
// the store did not have is remembered as long: a key minted meanwhile with
// that very id is unlikely, as ids hold 82 random bits.
const cacheTTL = time.Second

// maxUnknownKeys bounds how many unknown key ids are remembered, so that
// guessing many ids cannot grow the memory without limit.
const maxUnknownKeys = 1024

// maxKeyIDLength is the longest key id looked up. Key ids are the store's
// ids, which are at most 64 characters as every id in a request; a longer
// one names no key, and the unknown ids remembered stay small.
const maxKeyIDLength = 64

// Authenticator turns bearer keys into principals. It keeps each key's row for
// cacheTTL, so that a busy key costs one database read a second, and the ids
// the store did not have for as long, so that a guess repeated costs none.
type Authenticator struct {
	store KeyStore
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cachedKey
	// unknown holds when the store last said it had no key of an id.
	unknown map[string]time.Time
}

type cachedKey struct {
	key       *db.APIKey
	principal *Principal
	fetched   time.Time
}

// NewAuthenticator returns an Authenticator reading keys from store.
func NewAuthenticator(store KeyStore, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{store: store, now: now, cache: map[string]cachedKey{}, unknown: map[string]time.Time{}}
}

// Authenticate returns the principal of a key string, or ErrUnauthorized.
// Other errors are the store's.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (*Principal, error) {
	id, secret, ok := ParseKey(key)
	if !ok || len(id) > maxKeyIDLength {
		return nil, ErrUnauthorized
	}
	c, err := a.find(ctx, id)
	if err != nil {
		return nil, err
	}
	k := c.key
	if !SecretMatches(secret, k.SecretHash) {
		return nil, ErrUnauthorized
	}
	now := a.now()
	if k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return nil, ErrUnauthorized
	}
	return c.principal, nil
}

// principalOf is the principal a key makes. Callers share it: it is not to
// be changed.
func principalOf(k *db.APIKey) *Principal {
	p := &Principal{
		KeyID:           k.ID,
		Kind:            Accountant,
		FirmID:          k.FirmID,
		RateLimitMax:    k.RateLimitMax,
		RateLimitWindow: time.Duration(k.RateLimitWindowMS) * time.Millisecond,
		Permissions:     make([]Permission, len(k.Permissions)),
	}
	if k.ClientID != nil {
		p.Kind, p.ClientID = Client, *k.ClientID
	}
	for i, s := range k.Permissions {
		p.Permissions[i] = Permission(s)
	}
	return p
}

// Known reports whether key is a key this Authenticator has found before,
// sent with its secret, however long ago; it reads nothing. A key's secret
// never changes, so an old record still tells. The secret is hashed whether
// the id is known or not, so that the answer takes as long either way.
// Authenticate still checks that the key is not revoked or expired.
func (a *Authenticator) Known(key string) bool {
	id, secret, ok := ParseKey(key)
	if !ok {
		return false
	}
	a.mu.Lock()
	c, found := a.cache[id]
	a.mu.Unlock()
	var hash []byte
	if found {
		hash = c.key.SecretHash
	}
	return SecretMatches(secret, hash) && found
}

// find returns the cached record of the key id, reading it when it is older
// than cacheTTL. An id the store does not have is ErrUnauthorized, and is
// not read again for cacheTTL.
func (a *Authenticator) find(ctx context.Context, id string) (cachedKey, error) {
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[id]
	missing, unknown := a.unknown[id]
	a.mu.Unlock()
	if ok && now.Sub(c.fetched) < cacheTTL {
		return c, nil
	}
	if unknown && now.Sub(missing) < cacheTTL {
		return cachedKey{}, ErrUnauthorized
	}
	k, err := a.store.FindAPIKey(ctx, id)
	if db.ErrorCode(err) == db.ENOTFOUND {
		a.mu.Lock()
		if len(a.unknown) >= maxUnknownKeys {
			// Starting afresh costs one more read per id forgotten, and an
			// entry serves for a second only.
			clear(a.unknown)
		}
		a.unknown[id] = now
		a.mu.Unlock()
		return cachedKey{}, ErrUnauthorized
	}
	if err != nil {
		return cachedKey{}, err
	}
	c = cachedKey{key: k, principal: principalOf(k), fetched: now}
	a.mu.Lock()
	a.cache[id] = c
	a.mu.Unlock()
	return c, nil
}
