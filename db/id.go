package db

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"time"
)

// idAlphabet is base 36 in lower case, the cuid alphabet.
const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// NewID returns a new record id in cuid format: "c", 8 base-36 digits of the
// millisecond clock (so ids sort roughly by creation time) and 16 base-36
// digits from crypto/rand (about 82 bits: ids cannot be guessed).
func NewID() string {
	return newIDAt(time.Now())
}

func newIDAt(t time.Time) string {
	var b [25]byte
	b[0] = 'c'
	ts := strconv.FormatInt(t.UnixMilli(), 36)
	if len(ts) > 8 {
		// After 2059 the clock needs a ninth digit: keep the format, lose the order.
		ts = ts[len(ts)-8:]
	}
	for i := 0; i < 8-len(ts); i++ {
		b[1+i] = '0'
	}
	copy(b[9-len(ts):9], ts)

	var random [16]byte
	if _, err := rand.Read(random[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	hi := binary.BigEndian.Uint64(random[:8])
	lo := binary.BigEndian.Uint64(random[8:])
	for i := 0; i < 8; i++ {
		b[9+i] = idAlphabet[hi%36]
		hi /= 36
		b[17+i] = idAlphabet[lo%36]
		lo /= 36
	}
	return string(b[:])
}
