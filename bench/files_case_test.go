package bench

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// parallelUntil runs every f(i) from from on while until is ahead, and
// past it f(from) alone: a part of the upload is never empty, and to
// says which ran.
func TestParallelUntil(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, n  int
		until    time.Time
		wantTo   int
		wantRuns int
	}{
		{"ahead", 3, 40, time.Now().Add(time.Hour), 40, 37},
		{"past", 3, 40, time.Now().Add(-time.Hour), 4, 1},
		{"none left", 40, 40, time.Now().Add(time.Hour), 40, 0},
		{"no deadline", 0, 40, time.Time{}, 40, 40},
	} {
		ran := make([]atomic.Int32, c.n)
		to, err := parallelUntil(4, c.from, c.n, c.until, func(i int) error {
			ran[i].Add(1)
			return nil
		})
		if err != nil || to != c.wantTo {
			t.Errorf("%s: to %d, err %v; want %d", c.name, to, err, c.wantTo)
		}
		runs := 0
		for i := range ran {
			k := int(ran[i].Load())
			if (i >= c.from && i < to) != (k == 1) || k > 1 {
				t.Errorf("%s: f(%d) ran %d times, to %d", c.name, i, k, to)
			}
			runs += k
		}
		if runs != c.wantRuns {
			t.Errorf("%s: %d runs, want %d", c.name, runs, c.wantRuns)
		}
	}
	// An error is returned, and to counts the f that failed.
	boom := errors.New("boom")
	to, err := parallelUntil(2, 0, 1000, time.Now().Add(time.Hour), func(i int) error {
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || to <= 10 {
		t.Errorf("an error at 10: to %d, err %v", to, err)
	}
}
