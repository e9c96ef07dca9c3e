// Package longtest says whether a test run asked for the long soaks: the
// bigger random runs, the many kills, the largest sets, the soaks that run
// for a while. `go test ./...` leaves them out so the whole suite stays
// quick enough to run before every change; `go test ./node -long` asks for
// them in one package (the flag is defined by every test binary that
// imports this package; -long=DURATION also sets how long a soak that runs
// for a time runs), and MINCA_LONG_TESTS=1 asks in every package at once,
// since a flag that a package does not define would stop its test binary.
package longtest

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

// long is -long: a bool, or a duration that also turns the soaks on.
type long struct {
	on bool
	d  time.Duration
}

func (l *long) IsBoolFlag() bool { return true }

func (l *long) String() string {
	if l == nil {
		return "false"
	}
	if l.d > 0 {
		return l.d.String()
	}
	return strconv.FormatBool(l.on)
}

func (l *long) Set(s string) error {
	if b, err := strconv.ParseBool(s); err == nil {
		l.on, l.d = b, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("-long takes true, false or a duration, not %q", s)
	}
	l.on, l.d = d > 0, d
	return nil
}

var flagLong = &long{}

func init() {
	flag.Var(flagLong, "long", "run the long soaks too (also MINCA_LONG_TESTS=1); -long=DURATION: soaks that run for a time run this long")
}

// Enabled reports whether the long soaks run.
func Enabled() bool { return flagLong.on || os.Getenv("MINCA_LONG_TESTS") == "1" }

// Duration is how long a soak that runs for a time runs: -long=DURATION's
// duration, else def when the long soaks run, else 0 (it does not run).
func Duration(def time.Duration) time.Duration {
	switch {
	case flagLong.d > 0:
		return flagLong.d
	case Enabled():
		return def
	}
	return 0
}
