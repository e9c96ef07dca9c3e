//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system, on
// every thread; 0 where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
