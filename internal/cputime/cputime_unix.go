//go:build unix

// Package cputime reads the CPU time the process has used, for the
// benchmarks' CPU-time ratios: on a machine others load, what the work
// cost rather than how long it waited for a core.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time, user and system, the process has used; 0
// where it can't be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
