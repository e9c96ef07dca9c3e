package engine

import (
	"bytes"
	"context"
	"math"

	"github.com/minca-go/minca/canonical"
)

// VersionsJSON is [Store.VersionJSON] for many versions at once: it calls
// found with each held one's index in ids and its canonical JSON, in
// ascending index order; what is not held is skipped. It reads them as
// [Store.VersionsStored] does, each table in sorted passes, which costs
// much less than two point reads a version, and holds a copy of each to
// hand them over in the order asked.
func (s *Store) VersionsJSON(ctx context.Context, ids []canonical.ID, found func(i int, raw []byte) error) error {
	raws := make([][]byte, len(ids))
	if err := s.VersionsStored(ctx, ids, math.MaxInt, func(i int, raw []byte) error {
		raws[i] = bytes.Clone(raw)
		return nil
	}); err != nil {
		return err
	}
	for i, raw := range raws {
		if raw == nil {
			continue
		}
		if err := found(i, raw); err != nil {
			return err
		}
	}
	return nil
}
