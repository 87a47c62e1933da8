//go:build !race

package docread

const raceEnabled = false
