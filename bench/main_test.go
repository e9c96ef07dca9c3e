package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/minca-go/minca/internal/longtest"
)

// The tests here check that each runner completes and measures every
// figure, not the figures themselves (those are `minca bench`'s, reported
// in REPORT-*.md): each measurement runs for 20 ms rather than a second,
// unless the run asks for benchmarks, a -test.benchtime, or -long.
func TestMain(m *testing.M) {
	flag.Parse()
	asked := longtest.Enabled()
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.benchtime" || f.Name == "test.bench" {
			asked = true
		}
	})
	if !asked {
		flag.Set("test.benchtime", "20ms")
	}
	os.Exit(m.Run())
}
