package bench

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chanWriter hands each write to a channel.
type chanWriter chan string

func (c chanWriter) Write(p []byte) (int, error) {
	c <- string(p)
	return len(p), nil
}

// A step that makes no progress is reported with the end of each node's
// stderr (its last tailLines lines) and whether the node runs; one that
// makes progress is not.
func TestWatchStallShowsTheNodesStderr(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receiver.stderr")
	var log strings.Builder
	for i := range 30 {
		log.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	log.WriteString("the last line\n")
	if err := os.WriteFile(path, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	n := &filesNode{role: "receiver", stderrPath: path, exited: make(chan struct{})}
	got := make(chanWriter, 16)
	var done atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchStall(got, "sync", time.Millisecond, &done, 10, stop, n)
	}()
	var report string
	select {
	case report = <-got:
	case <-time.After(time.Minute):
		t.Fatal("no stall reported in a minute")
	}
	close(stop)
	<-watched
	for _, want := range []string{"sync: nothing for", "(0 of 10 done)", "the receiver node, running", path, "the last line"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	_, tail, _ := strings.Cut(report, path+"):\n")
	if lines := strings.Split(strings.TrimSuffix(tail, "\n"), "\n"); len(lines) != tailLines || lines[0] != "line l" {
		t.Errorf("the report shows %d lines of stderr from %q, want %d from line l:\n%s", len(lines), lines[0], tailLines, report)
	}
}
