package bench

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/minca-go/minca/internal/longtest"
)

// The tests here check that each runner completes and measures every
// figure, not the figures themselves (those are `minca bench`'s, reported
// in REPORT-*.md): each measurement runs for 20 ms rather than a second,
// unless the run asks for benchmarks, a -test.benchtime (a duration: the
// measurements run that long), or -long.
func TestMain(m *testing.M) {
	flag.Parse()
	asked := longtest.Enabled()
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "test.benchtime":
			asked = true
			if d, err := time.ParseDuration(f.Value.String()); err == nil {
				benchTime = d
			}
		case "test.bench":
			asked = true
		}
	})
	if !asked {
		flag.Set("test.benchtime", "20ms")
		benchTime = 20 * time.Millisecond
	}
	os.Exit(m.Run())
}
