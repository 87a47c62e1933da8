package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// collectTokenBytes is how many random bytes a collect token carries: 256
// bits, which no one guesses.
const collectTokenBytes = 32

// CollectTokenLength is the length of a collect token's text: 32 bytes in
// unpadded URL-safe base64.
const CollectTokenLength = 43

// NewCollectToken returns a new collect session token, shown once to whoever
// creates the session, and its hash, the only form the store keeps.
func NewCollectToken() (token string, hash []byte, err error) {
	var b [collectTokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, fmt.Errorf("new collect token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashCollectToken(token), nil
}

// HashCollectToken returns the SHA-256 of a collect token's text: the key the
// store looks a session up by.
func HashCollectToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// ValidCollectToken reports whether token has the form NewCollectToken
// makes: 43 characters of the URL-safe base64 alphabet. Anything else is
// answered as an unknown token without looking it up.
func ValidCollectToken(token string) bool {
	if len(token) != CollectTokenLength {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
