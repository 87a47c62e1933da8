//go:build !race

package docfields

const raceEnabled = false
