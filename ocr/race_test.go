//go:build race

package ocr

// raceEnabled: the race detector shadows every allocation, so what a
// decoded image costs in memory grows several times over under it.
const raceEnabled = true
