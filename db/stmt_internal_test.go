package db

import (
	"testing"
	"time"
)

// waitPrepared waits (bounded) until the background preparation of query
// has ended, and reports whether the cache holds it.
func waitPrepared(t *testing.T, c *stmtCache, query string) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, busy := c.pending.Load(query); !busy {
			_, ok := c.stmts.Load(query)
			return ok
		}
	}
	t.Fatalf("%s: still being prepared after 5 s", query)
	return false
}

func TestPrepareLater(t *testing.T) {
	d := openWriterTestDB(t)
	c := d.readStmts

	const good = `SELECT count(*) FROM settings`
	c.prepareLater(good)
	if !waitPrepared(t, c, good) {
		t.Errorf("%s was not cached", good)
	}

	// A failed preparation is forgotten, so that a later one tries again.
	const bad = `SELECT nothing FROM nowhere`
	c.prepareLater(bad)
	if waitPrepared(t, c, bad) {
		t.Errorf("%s was cached", bad)
	}
	if _, busy := c.pending.LoadOrStore(bad, true); busy {
		t.Errorf("%s is still marked as being prepared: it would never be tried again", bad)
	}
}
