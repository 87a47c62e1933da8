package auth

import (
	"context"
	"fmt"
	"time"

	"acctapi/db"
)

// Default rate limit of a new key: 600 requests a minute.
const (
	DefaultRateLimitMax    = 600
	DefaultRateLimitWindow = time.Minute
)

// KeySpec describes a key to mint. Zero values take the defaults: an
// accountant key with every permission of its kind (DefaultPermissions) and
// the default rate limit.
type KeySpec struct {
	ClientID        string // a client key when set
	Name            string
	Permissions     []string
	RateLimitMax    int
	RateLimitWindow time.Duration
	ExpiresAt       *time.Time
}

// MintKey creates a key of the firm and returns the key string, shown once,
// with the stored record.
func MintKey(ctx context.Context, store *db.DB, firmID string, spec KeySpec) (string, *db.APIKey, error) {
	kind := Accountant
	var clientID *string
	if spec.ClientID != "" {
		kind, clientID = Client, &spec.ClientID
	}
	perms := DefaultPermissions(kind)
	if spec.Permissions != nil {
		var err error
		if perms, err = ParsePermissions(kind, spec.Permissions); err != nil {
			return "", nil, err
		}
	}
	if spec.RateLimitMax == 0 {
		spec.RateLimitMax = DefaultRateLimitMax
	}
	if spec.RateLimitWindow == 0 {
		spec.RateLimitWindow = DefaultRateLimitWindow
	}
	if spec.RateLimitMax < 0 || spec.RateLimitWindow < time.Millisecond {
		return "", nil, fmt.Errorf("rate limit must be a positive count per at least 1 ms")
	}
	if spec.Name == "" {
		spec.Name = string(kind) + " key"
	}
	id := db.NewID()
	key, hash := NewKey(id)
	names := make([]string, len(perms))
	for i, p := range perms {
		names[i] = string(p)
	}
	stored, err := store.CreateAPIKey(ctx, firmID, db.APIKeyCreate{
		ID: id, ClientID: clientID, Name: spec.Name, SecretHash: hash, Permissions: names,
		RateLimitMax: spec.RateLimitMax, RateLimitWindowMS: spec.RateLimitWindow.Milliseconds(),
		ExpiresAt: spec.ExpiresAt,
	})
	if err != nil {
		return "", nil, err
	}
	return key, stored, nil
}

// FirstFirm creates the deployment's firm and its first accountant key,
// which holds every permission: what a data dir's first start makes. It
// returns the key string, shown once, with the stored record.
func FirstFirm(ctx context.Context, store *db.DB, name string) (*db.Firm, string, *db.APIKey, error) {
	firm, err := store.CreateFirm(ctx, name)
	if err != nil {
		return nil, "", nil, err
	}
	key, stored, err := MintKey(ctx, store, firm.ID, KeySpec{Name: "first accountant key"})
	if err != nil {
		return nil, "", nil, err
	}
	return firm, key, stored, nil
}
