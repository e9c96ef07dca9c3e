//go:build !unix

package bench

import "time"

// processCPU is 0 where the process's CPU time is not read: the CPU-time
// ratios are then not measured (NaN).
func processCPU() time.Duration { return 0 }
