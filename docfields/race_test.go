//go:build race

package docfields

// raceEnabled slows the tests that measure time.
const raceEnabled = true
