// Package bench is Minca for Go's benchmark suite. Each suite is a config
// struct and a Run function returning a result that reports ratios against
// a bound measured in the same run — never a bare time, since the machines
// it runs on are shared and noisy — and medians over several rounds.
// `minca bench` binds the configs to flags and prints the results; the
// Benchmark functions beside the code they measure stay there for
// `go test -bench`.
package bench
