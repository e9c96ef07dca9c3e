package main

import (
	"fmt"
	"log/slog"

	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/progress"
)

// newMeter is a long verb's progress line on stderr: redrawn in place on
// a terminal, a log record every 5 s otherwise (internal/progress). With
// --log-format json it is always log records, so stderr stays JSON lines.
func newMeter(s *stdio, log *slog.Logger, label string) *progress.Meter {
	terminal := progress.IsTerminal(s.err) && s.format() != "json"
	return progress.New(s.err, label, progress.Options{Terminal: terminal, Logger: log, Every: s.progressEvery})
}

// segmentsRead is a restore's progress: segments read of those listed.
func segmentsRead(ms mirror.Stats) progress.Status {
	return progress.Status{
		Text: fmt.Sprintf("%s of %s segments read, %s versions (%s new)", progress.Count(ms.SegmentsRead), progress.Count(ms.SegmentsToRead),
			progress.Count(ms.Admitted), progress.Count(ms.Stored)),
		Done: ms.SegmentsRead, Total: ms.SegmentsToRead,
	}
}

// mirrorStatus is a mirror's progress: both ways at once.
func mirrorStatus(ms mirror.Stats) progress.Status {
	st := segmentsRead(ms)
	st.Text = fmt.Sprintf("exported %s versions in %s segments; imported %s", progress.Count(ms.Exported), progress.Count(ms.SegmentsWritten), st.Text)
	return st
}

// bytesText writes a size for people: "1.5 MB".
func bytesText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
