package accounthome

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/internal/atomicfile"
)

// maxStoreBytes bounds the connections file a home reads back.
const maxStoreBytes = 16 << 20

// FileStore keeps a home's connections (06 §2.10) in one JSON file,
// rewritten whole and atomically (a temporary file, synced, renamed over
// the old, the directory synced) before Apply returns. Safe for
// concurrent use.
type FileStore struct {
	path string
	mu   sync.Mutex
}

var _ connect.Store = (*FileStore)(nil)

// NewFileStore keeps connections at path; a missing file is none.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Connections reads the connections kept. A file that does not read is
// an error naming it, never an empty list.
func (s *FileStore) Connections(ctx context.Context) ([]connect.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read()
}

func (s *FileStore) read() ([]connect.Connection, error) {
	f, err := os.Open(s.path)
	if os.IsNotExist(err) {
		return []connect.Connection{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []connect.Connection
	dec := json.NewDecoder(&limited{f, maxStoreBytes})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("minca/accounthome: the connections in %s are damaged: %w", s.path, err)
	}
	return out, nil
}

// Apply removes the connections with the ids in remove, puts those in
// put, and writes the file durably.
func (s *FileStore) Apply(ctx context.Context, put []connect.Connection, remove []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conns, err := s.read()
	if err != nil {
		return err
	}
	byID := map[string]connect.Connection{}
	var order []string
	for _, c := range conns {
		if _, ok := byID[c.ID()]; !ok {
			order = append(order, c.ID())
		}
		byID[c.ID()] = c
	}
	for _, id := range remove {
		delete(byID, id)
	}
	for _, c := range put {
		if _, ok := byID[c.ID()]; !ok {
			order = append(order, c.ID())
		}
		byID[c.ID()] = c
	}
	out := []connect.Connection{}
	seen := map[string]bool{}
	for _, id := range order {
		if c, ok := byID[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, c)
		}
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path, b, 0o600)
}

// limited reads at most n bytes, then fails: a file past the bound is
// refused, not cut short.
type limited struct {
	f interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("more than %d bytes", maxStoreBytes)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}
