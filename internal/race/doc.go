// Package race says whether this binary was built with the race detector
// (go test -race), for tests that size their work by it: the detector
// makes each memory access several times slower, so a test that repeats
// random trials or fills a store past a bound does fewer trials, or stays
// closer past the bound, under -race, and keeps every assertion. The
// sizes the suite runs without -race are unchanged.
package race
