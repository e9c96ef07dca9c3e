package bench

import (
	"context"
	"testing"
)

// BenchmarkNodeWrites writes b.N records through the node's full path
// from 64 goroutines (for profiling: go test -run - -bench NodeWrites
// -benchtime 20000x -cpuprofile cpu.out ./bench).
func BenchmarkNodeWrites(b *testing.B) {
	ctx := context.Background()
	n, sp, err := benchNode(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	b.ResetTimer()
	if _, _, err := writeRate(ctx, n, sp, b.N, 64); err != nil {
		b.Fatal(err)
	}
}
