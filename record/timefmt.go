package record

import (
	"errors"
	"time"
)

// ParseTime reads createdAt: an ISO 8601 date and time with a zone, as
// RFC 3339 profiles it (2026-09-26T12:00:00.000Z). Fractional seconds are
// optional. 02 §3.1, §9.3 step 1.
func ParseTime(s string) (time.Time, error) {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > 64 {
		return time.Time{}, errors.New("not an ISO 8601 time such as 2026-09-26T12:00:00.000Z")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("not an ISO 8601 time such as 2026-09-26T12:00:00.000Z")
	}
	return t, nil
}

// FormatTime writes t as createdAt: UTC, milliseconds, Z.
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// UnixMillis is createdAt in Unix milliseconds, the sync order's timestamp
// (DESIGN.md, Negentropy and sync): 0 when it does not parse or is before
// 1970.
func UnixMillis(createdAt string) uint64 {
	t, err := ParseTime(createdAt)
	if err != nil {
		return 0
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return 0
	}
	return uint64(ms)
}
