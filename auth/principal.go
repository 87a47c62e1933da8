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
// revoked from the CLI, in another process, stops working within it.
const cacheTTL = time.Second

// Authenticator turns bearer keys into principals. It keeps each key's row for
// cacheTTL, so that a busy key costs one database read a second.
type Authenticator struct {
	store KeyStore
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cachedKey
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
	return &Authenticator{store: store, now: now, cache: map[string]cachedKey{}}
}

// Authenticate returns the principal of a key string, or ErrUnauthorized.
// Other errors are the store's.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (*Principal, error) {
	id, secret, ok := ParseKey(key)
	if !ok {
		return nil, ErrUnauthorized
	}
	c, err := a.find(ctx, id)
	if db.ErrorCode(err) == db.ENOTFOUND {
		return nil, ErrUnauthorized
	}
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

func (a *Authenticator) find(ctx context.Context, id string) (cachedKey, error) {
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[id]
	a.mu.Unlock()
	if ok && now.Sub(c.fetched) < cacheTTL {
		return c, nil
	}
	k, err := a.store.FindAPIKey(ctx, id)
	if err != nil {
		return cachedKey{}, err
	}
	c = cachedKey{key: k, principal: principalOf(k), fetched: now}
	a.mu.Lock()
	a.cache[id] = c
	a.mu.Unlock()
	return c, nil
}
