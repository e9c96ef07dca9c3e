// Package longtest says whether a test run asked for the long soaks: the
// bigger random runs, the many kills, the largest sets. `go test ./...`
// leaves them out so the whole suite stays quick enough to run before
// every change; `go test -long ./node` asks for them in one package (the
// flag is defined by every test binary that imports this package), and
// MINCA_LONG_TESTS=1 asks in every package at once, since a flag that a
// package does not define would stop its test binary.
package longtest

import (
	"flag"
	"os"
)

var long = flag.Bool("long", false, "run the long soaks too (also MINCA_LONG_TESTS=1)")

// Enabled reports whether the long soaks run.
func Enabled() bool { return *long || os.Getenv("MINCA_LONG_TESTS") == "1" }
