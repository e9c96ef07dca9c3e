package bench

import (
	"runtime"
	"time"
)

// B is what a measured function is handed, the part of package testing's
// B the suite uses: run the operation N times (for range b.N), or while
// Loop says so. The minca binary runs the suite, so it does not link
// package testing.
type B struct {
	// N is how many times to run the operation.
	N int

	looped  int
	start   time.Time
	mallocs uint64 // at start
	alloced uint64 // bytes, at start
	stopped bool
	elapsed time.Duration
	allocs  uint64 // during the run
	bytes   uint64
}

// ReportAllocs is a no-op: allocations are always counted.
func (b *B) ReportAllocs() {}

// Loop reports whether to run the operation again: true N times, then
// false. Like testing.B's, the first call starts the clock, so what runs
// before the loop is not measured, and the last stops it.
func (b *B) Loop() bool {
	if b.looped == 0 {
		b.startTimer()
	}
	if b.looped < b.N {
		b.looped++
		return true
	}
	b.stopTimer()
	return false
}

func (b *B) startTimer() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.mallocs, b.alloced = ms.Mallocs, ms.TotalAlloc
	b.start = time.Now()
}

func (b *B) stopTimer() {
	if b.stopped {
		return
	}
	b.elapsed = time.Since(b.start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.allocs, b.bytes = ms.Mallocs-b.mallocs, ms.TotalAlloc-b.alloced
	b.stopped = true
}

// runN runs f once with N = n, after a collection.
func runN(f func(*B), n int) *B {
	b := &B{N: n}
	runtime.GC()
	b.startTimer()
	f(b)
	b.stopTimer()
	return b
}

// benchTime is how long a measured run lasts at the least: a second, as
// go test's default -benchtime. The package's tests shorten it (they
// check that each runner measures every figure, not the figures).
var benchTime = time.Second

// measure runs f with N growing as package testing grows it — from 1,
// aiming at benchTime from the last run's pace with a fifth more, at most
// a hundredfold a step — until a run lasts benchTime, and gives that
// run's figures per operation.
func measure(f func(b *B)) Measure {
	n := 1
	b := runN(f, n)
	for b.elapsed < benchTime && n < 1e9 {
		prev := n
		n = int(benchTime.Nanoseconds() * int64(prev) / max(b.elapsed.Nanoseconds(), 1))
		n += n / 5
		n = max(min(n, 100*prev, 1e9), prev+1)
		b = runN(f, n)
	}
	return Measure{NsPerOp: float64(b.elapsed.Nanoseconds()) / float64(n),
		AllocsPerOp: int64(b.allocs) / int64(n), BytesPerOp: int64(b.bytes) / int64(n)}
}
