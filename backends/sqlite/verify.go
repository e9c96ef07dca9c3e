package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/backends/internal/localstore"
	"github.com/minca-go/minca/engine"
)

// VerifyFiles runs SQLite's integrity check over the whole database file:
// every page, those reading every key never touches included (free pages,
// the schema), and decodes every block of a store of blocks. It returns
// one line per problem SQLite reports (at most 100) and per block that
// does not decode (at most 100), or one for a database too damaged to
// check; the error is for a check that could not be made.
func (s *Store) VerifyFiles(ctx context.Context) ([]string, error) {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	rows, err := s.own.QueryContext(ctx, `PRAGMA integrity_check(100)`)
	if err != nil {
		return s.damage(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return s.damage(err)
		}
		if msg != "ok" {
			problems = append(problems, localstore.Corrupt("sqlite", s.path, s.inFile(msg)).Error())
		}
	}
	if err := rows.Err(); err != nil {
		return s.damage(err)
	}
	rows.Close()
	if s.blocks != nil {
		more, err := s.verifyBlocks(ctx)
		if err != nil {
			return nil, err
		}
		problems = append(problems, more...)
	}
	return problems, nil
}

// verifyBlocks decodes every block of a store of blocks (blocks.go): one
// line per block that does not, naming its keys, at most 100.
func (s *Store) verifyBlocks(ctx context.Context) ([]string, error) {
	rows, err := s.own.QueryContext(ctx, `SELECT k, v FROM `+blocksTable+` ORDER BY k`)
	if err != nil {
		return s.damage(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() && len(problems) < 100 {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return s.damage(err)
		}
		if idx, ok := s.fam.span(k); !ok || idx != 0 {
			problems = append(problems, s.wrap(fmt.Errorf("%w: a block's key %x is not a block's", errDamagedValue, k)).Error())
			continue
		}
		if _, err := s.blocks.decodeRow(v); err != nil {
			first, last := s.blockRange(k)
			problems = append(problems, s.wrap(fmt.Errorf("%w: the block of keys %x to %x: %v", errDamagedValue, first, last, err)).Error())
		}
	}
	if err := rows.Err(); err != nil {
		return s.damage(err)
	}
	return problems, nil
}

// damage is the outcome of an integrity check that failed: a problem when
// SQLite found damage, an error otherwise.
func (s *Store) damage(err error) ([]string, error) {
	if err := s.wrap(err); errors.Is(err, engine.ErrCorrupt) {
		return []string{err.Error()}, nil
	}
	return nil, s.wrap(err)
}
