//go:build !unix

// Package cputime reads the CPU time the process has used, for the
// benchmarks' CPU-time ratios: on a machine others load, what the work
// cost rather than how long it waited for a core.
package cputime

import "time"

// Process is 0 where the process's CPU time is not read: the CPU-time
// ratios are then not measured (NaN).
func Process() time.Duration { return 0 }
