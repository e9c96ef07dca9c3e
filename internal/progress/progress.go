// Package progress shows how far a long command has got, on stderr: one
// line redrawn in place (\r) on a terminal, with a percentage and an ETA
// when the total is known; periodic log lines (log/slog) when stderr is a
// file or a pipe, so a log stays readable.
//
// A Meter is safe for concurrent use. It keeps no global state; its clock
// is injectable for tests.
package progress

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// Options configure a Meter; the zero value of each field means its
// default.
type Options struct {
	// Terminal redraws one line in place; otherwise a line is written
	// (logged) every Every. Set it from [IsTerminal] of the writer.
	Terminal bool
	// Logger, when not on a terminal, writes the periodic lines as log
	// records (so they follow --log-format); nil writes plain lines.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Redraw is the least time between two redraws on a terminal; default
	// 200 ms.
	Redraw time.Duration
	// Every is the time between two lines when not on a terminal; default
	// 5 s.
	Every time.Duration
}

// Status is what a Meter shows.
type Status struct {
	// Text says what has been done, e.g. "12,000 versions, 3 refused".
	Text string
	// Done and Total measure the work in one unit (bytes of input,
	// segments); Total 0 means unknown: no percentage, no ETA.
	Done, Total int64
}

// Meter is one long task's progress line.
type Meter struct {
	w     io.Writer
	label string
	o     Options

	mu      sync.Mutex
	start   time.Time
	last    time.Time // when the line was last shown
	shown   bool      // a line is on the terminal, to clear
	current Status
}

// New returns a meter that writes to w, each line starting with label.
func New(w io.Writer, label string, o Options) *Meter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redraw <= 0 {
		o.Redraw = 200 * time.Millisecond
	}
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	now := o.Now()
	return &Meter{w: w, label: label, o: o, start: now, last: now}
}

// Update records st and shows it if it is time to: on a terminal at most
// every Redraw, otherwise every Every.
func (m *Meter) Update(st Status) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.current = st
	now := m.o.Now()
	gap := m.o.Every
	if m.o.Terminal {
		gap = m.o.Redraw
	}
	if now.Sub(m.last) < gap {
		return
	}
	m.last = now
	m.show(now)
}

// Done clears the line from a terminal, so what the command prints next
// starts on a clean line. The meter may not be used after.
func (m *Meter) Done() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.o.Terminal && m.shown {
		fmt.Fprint(m.w, "\r\033[K")
		m.shown = false
	}
}

func (m *Meter) show(now time.Time) {
	st := m.current
	elapsed := now.Sub(m.start)
	pct, eta, known := estimate(st, elapsed)
	if !m.o.Terminal && m.o.Logger != nil {
		attrs := []any{"progress", st.Text, "elapsedSeconds", round(elapsed.Seconds())}
		if known {
			attrs = append(attrs, "percent", round(pct), "etaSeconds", round(eta.Seconds()))
		}
		m.o.Logger.Info(m.label, attrs...)
		return
	}
	var b strings.Builder
	b.WriteString(m.label)
	if st.Text != "" {
		b.WriteString(": ")
		b.WriteString(st.Text)
	}
	if known {
		fmt.Fprintf(&b, " — %.0f%%, ETA %s", pct, Duration(eta))
	} else {
		fmt.Fprintf(&b, " — %s", Duration(elapsed))
	}
	if m.o.Terminal {
		fmt.Fprintf(m.w, "\r%s\033[K", b.String())
		m.shown = true
		return
	}
	fmt.Fprintln(m.w, b.String())
}

// estimate is the share done in percent and the time left, by the rate so
// far; known is false without a total or before anything is done.
func estimate(st Status, elapsed time.Duration) (pct float64, eta time.Duration, known bool) {
	if st.Total <= 0 {
		return 0, 0, false
	}
	done := min(max(st.Done, 0), st.Total)
	pct = 100 * float64(done) / float64(st.Total)
	if done == 0 {
		return pct, 0, false
	}
	eta = time.Duration(float64(elapsed) * float64(st.Total-done) / float64(done))
	return pct, eta, true
}

func round(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// Duration writes d for people, to the second: "45s", "3m07s", "2h05m".
func Duration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// IsTerminal reports whether w is a terminal (a character device), where a
// line can be redrawn in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Count writes n with thousands separators: 1234567 is "1,234,567".
func Count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
