package progress

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a hand-moved clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 9, 26, 12, 0, 0, 0, time.UTC)} }

func TestTerminalRedrawsInPlaceWithPercentAndETA(t *testing.T) {
	c := newClock()
	var b bytes.Buffer
	m := New(&b, "store import", Options{Terminal: true, Now: c.now})
	m.Update(Status{Text: "0 versions", Done: 0, Total: 1000})
	if b.Len() != 0 {
		t.Fatalf("drew before the first redraw interval: %q", b.String())
	}
	c.add(10 * time.Second)
	m.Update(Status{Text: "250 versions", Done: 250, Total: 1000})
	// A quarter in 10 s: three quarters left take 30 s.
	want := "\rstore import: 250 versions — 25%, ETA 30s\033[K"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	c.add(100 * time.Millisecond)
	m.Update(Status{Text: "260 versions", Done: 260, Total: 1000})
	if b.Len() != 0 {
		t.Fatalf("redrew within 200 ms: %q", b.String())
	}
	c.add(110 * time.Second)
	m.Update(Status{Text: "500 versions", Done: 500, Total: 1000})
	if want := "\rstore import: 500 versions — 50%, ETA 2m00s\033[K"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	m.Done()
	if b.String() != "\r\033[K" {
		t.Fatalf("Done wrote %q, want the line cleared", b.String())
	}
}

func TestUnknownTotalShowsElapsed(t *testing.T) {
	c := newClock()
	var b bytes.Buffer
	m := New(&b, "backup", Options{Terminal: true, Now: c.now})
	c.add(75 * time.Second)
	m.Update(Status{Text: "3 segments"})
	if want := "\rbackup: 3 segments — 1m15s\033[K"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	// Nothing done of a known total: a percentage needs a rate.
	b.Reset()
	c.add(time.Second)
	m.Update(Status{Text: "listing", Done: 0, Total: 10})
	if want := "\rbackup: listing — 1m16s\033[K"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestNotATerminalWritesPlainLinesEveryFiveSeconds(t *testing.T) {
	c := newClock()
	var b bytes.Buffer
	m := New(&b, "restore", Options{Now: c.now})
	for i := range 20 { // 20 updates a second apart: lines at 5, 10, 15, 20 s
		c.add(time.Second)
		m.Update(Status{Text: "segments", Done: int64(i + 1), Total: 40})
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || strings.Contains(b.String(), "\r") || strings.Contains(b.String(), "\033") {
		t.Fatalf("got %q, want 4 plain lines", b.String())
	}
	if lines[0] != "restore: segments — 12%, ETA 35s" || lines[3] != "restore: segments — 50%, ETA 20s" {
		t.Fatalf("lines %q", lines)
	}
	b.Reset()
	m.Done()
	if b.Len() != 0 {
		t.Fatalf("Done wrote %q off a terminal", b.String())
	}
}

func TestNotATerminalLogsThroughSlog(t *testing.T) {
	c := newClock()
	var b bytes.Buffer
	m := New(&b, "store export", Options{Now: c.now, Every: time.Second, Logger: slog.New(slog.NewJSONHandler(&b, nil))})
	c.add(2 * time.Second)
	m.Update(Status{Text: "10 versions", Done: 10, Total: 40})
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON record: %q", b.String())
	}
	if rec["msg"] != "store export" || rec["progress"] != "10 versions" || rec["percent"] != 25.0 || rec["etaSeconds"] != 6.0 || rec["elapsedSeconds"] != 2.0 {
		t.Fatalf("record %v", rec)
	}
}

func TestConcurrentUpdates(t *testing.T) {
	var b bytes.Buffer
	m := New(&b, "x", Options{Terminal: true, Redraw: time.Nanosecond})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				m.Update(Status{Done: int64(g*100 + i), Total: 400})
			}
		}()
	}
	wg.Wait()
	m.Done()
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Fatalf("the line was not cleared last: %q", b.String()[max(0, b.Len()-20):])
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(f) || IsTerminal(w) || IsTerminal(&bytes.Buffer{}) {
		t.Fatal("a file, a pipe or a buffer taken for a terminal")
	}
	// A character device is what the check looks for; /dev/null is one.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if fi, _ := null.Stat(); fi.Mode()&os.ModeCharDevice != 0 && !IsTerminal(null) {
			t.Fatal("a character device not taken for a terminal")
		}
	}
}

func TestFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 1499 * time.Millisecond: "1s", 59 * time.Second: "59s", 61 * time.Second: "1m01s", 3725 * time.Second: "1h02m"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
