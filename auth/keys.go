package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// keyPrefix starts every key, so that keys are recognisable in a leak scan.
const keyPrefix = "ak_"

// secretBytes is the key's random part: 256 bits.
const secretBytes = 32

// NewKey returns a key string for the key id and the hash of its secret, which
// is all that is stored. The key is "ak_<id>_<64 hex digits>".
func NewKey(id string) (key string, secretHash []byte) {
	var secret [secretBytes]byte
	if _, err := rand.Read(secret[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	s := hex.EncodeToString(secret[:])
	return keyPrefix + id + "_" + s, hashSecret(s)
}

// ParseKey splits a key string into its id and secret. ok is false when the
// string cannot be a key.
func ParseKey(key string) (id, secret string, ok bool) {
	rest, found := strings.CutPrefix(key, keyPrefix)
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 || len(rest)-i-1 != 2*secretBytes {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// SecretMatches reports, in constant time, whether secret hashes to hash.
func SecretMatches(secret string, hash []byte) bool {
	return subtle.ConstantTimeCompare(hashSecret(secret), hash) == 1
}

// hashSecret is a plain SHA-256: the secret has 256 random bits, so a slow
// password hash would add cost per request and no safety.
func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}
