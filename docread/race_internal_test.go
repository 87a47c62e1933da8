//go:build race

package docread

// raceEnabled slows the tests that measure time.
const raceEnabled = true
