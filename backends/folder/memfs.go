package folder

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory [FS] for tests, safe for concurrent use. Tests
// reach into it to play a sync service: add conflict copies, placeholders,
// torn files, resurrect deleted ones.
type MemFS struct {
	mu    sync.Mutex
	files map[string]*memFile
	dirs  map[string]bool
	clock func() time.Time
}

type memFile struct {
	data     []byte
	mod      time.Time
	dataless bool
}

// NewMemFS returns an empty in-memory filesystem whose root "/" exists.
func NewMemFS() *MemFS {
	return &MemFS{files: map[string]*memFile{}, dirs: map[string]bool{"/": true}, clock: time.Now}
}

var _ FS = (*MemFS)(nil)

func clean(p string) string { return filepath.Clean(p) }

func notExist(op, p string) error { return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist} }

func (m *MemFS) ReadDir(dir string) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if !m.dirs[dir] {
		return nil, notExist("readdir", dir)
	}
	seen := map[string]Entry{}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for p, f := range m.files {
		if rest, ok := strings.CutPrefix(p, prefix); ok && !strings.Contains(rest, "/") {
			seen[rest] = Entry{Name: rest, Size: int64(len(f.data)), ModTime: f.mod, Dataless: f.dataless}
		}
	}
	for p := range m.dirs {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			seen[rest] = Entry{Name: rest, Dir: true}
		}
	}
	out := make([]Entry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[clean(name)]
	if !ok {
		return nil, notExist("open", name)
	}
	return bytes.Clone(f.data), nil
}

func (m *MemFS) Stat(name string) (Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if f, ok := m.files[name]; ok {
		return Entry{Name: filepath.Base(name), Size: int64(len(f.data)), ModTime: f.mod, Dataless: f.dataless}, nil
	}
	if m.dirs[name] {
		return Entry{Name: filepath.Base(name), Dir: true}, nil
	}
	return Entry{}, notExist("stat", name)
}

type memWriter struct {
	m    *MemFS
	name string
	buf  bytes.Buffer
}

func (w *memWriter) Write(p []byte) (int, error) {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.buf.Write(p)
	if f, ok := w.m.files[w.name]; ok {
		f.data = bytes.Clone(w.buf.Bytes())
	}
	return len(p), nil
}
func (w *memWriter) Sync() error  { return nil }
func (w *memWriter) Close() error { return nil }

func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if !m.dirs[filepath.Dir(name)] {
		return nil, notExist("create", name)
	}
	if _, ok := m.files[name]; ok || m.dirs[name] {
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	m.files[name] = &memFile{mod: m.clock()}
	return &memWriter{m: m, name: name}, nil
}

func (m *MemFS) Rename(from, to string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	from, to = clean(from), clean(to)
	f, ok := m.files[from]
	if !ok {
		return notExist("rename", from)
	}
	if !m.dirs[filepath.Dir(to)] {
		return notExist("rename", to)
	}
	delete(m.files, from)
	m.files[to] = f
	return nil
}

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if _, ok := m.files[name]; ok {
		delete(m.files, name)
		return nil
	}
	if m.dirs[name] {
		prefix := name + "/"
		for p := range m.files {
			if strings.HasPrefix(p, prefix) {
				return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrExist}
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return notExist("remove", name)
}

func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := clean(dir); !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d] = true
	}
	return nil
}

func (m *MemFS) SyncDir(string) error { return nil }

// WriteFile puts a file in place at once, making its directories: a sync
// service delivering it.
func (m *MemFS) WriteFile(name string, data []byte) {
	_ = m.MkdirAll(filepath.Dir(name))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[clean(name)] = &memFile{data: bytes.Clone(data), mod: m.clock()}
}

// SetDataless marks a file as a placeholder whose content is elsewhere.
func (m *MemFS) SetDataless(name string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.files[clean(name)]; ok {
		f.dataless = on
	}
}

// RemoveAll removes a directory and everything under it: the folder
// emptied, or its drive unplugged.
func (m *MemFS) RemoveAll(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	prefix := dir + "/"
	for p := range m.files {
		if strings.HasPrefix(p, prefix) || p == dir {
			delete(m.files, p)
		}
	}
	for p := range m.dirs {
		if strings.HasPrefix(p, prefix) || p == dir {
			delete(m.dirs, p)
		}
	}
}

// Files lists every file path, sorted.
func (m *MemFS) Files() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.files))
	for p := range m.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
