//go:build !race

package race

// Enabled is false: this binary was built without -race.
const Enabled = false
