package bench

import (
	"testing"
	"time"
)

func TestRSSQuarters(t *testing.T) {
	var samples []rssSample
	for i := range 8 {
		samples = append(samples, rssSample{at: time.Duration(i) * time.Second, rss: int64(1024 * (10 + i)), anon: int64(1024 * i), files: 1024})
	}
	q := rssQuarters(samples)
	if want := [4]float64{11, 13, 15, 17}; q != want {
		t.Fatalf("quarters %v, want %v", q, want)
	}
	anon, files := rssPeakParts(samples)
	if anon != 7 || files != 1 {
		t.Fatalf("peak parts %v / %v, want 7 / 1", anon, files)
	}
	if q := rssQuarters(nil); q != ([4]float64{}) {
		t.Fatalf("no samples: %v", q)
	}
}

func TestReadRSSOfThisProcess(t *testing.T) {
	s, ok := readRSS("/proc/self/status")
	if !ok {
		t.Skip("no /proc/self/status on this system")
	}
	if s.rss <= 0 || s.anon <= 0 || s.anon+s.files > s.rss+1024 {
		t.Fatalf("implausible sample %+v", s)
	}
}

// A sample counts the process's threads: this test's process runs at
// least the ones a goroutine blocked in a system call holds.
func TestSampleCountsThreads(t *testing.T) {
	s, ok := readRSS("/proc/self/status")
	if !ok {
		t.Skip("no /proc/self/status on this system")
	}
	if s.threads < 1 {
		t.Fatalf("%d threads in %+v", s.threads, s)
	}
	if n := mostThreads([]rssSample{{threads: 3}, {threads: 9}, {threads: 4}}); n != 9 {
		t.Fatalf("most threads %d, want 9", n)
	}
}
