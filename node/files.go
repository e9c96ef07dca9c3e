package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// CodeFileNotHeld: a write names a file the node does not hold (upload it
// first), or names it with another size.
const CodeFileNotHeld = "write/file"

// FileUpload is a file being written for a version of a space to name
// (02 §3.1 files): Write its bytes, then Keep. In a private space it is
// sealed in chunks as it is written (docs/private-spaces.md §4), and the
// name Keep returns is the sealed file's. Nothing of it is held whole in
// memory.
type FileUpload struct {
	w      *engine.FileWriter
	sealer *seal.FileSealer // nil in a public space
	n      int64            // bytes of the file written
}

// NewFile starts a file for a version of the space to name. The caller
// closes it (after Keep, or to give up).
func (n *Node) NewFile(ctx context.Context, spaceID string) (*FileUpload, error) {
	g, ok, err := judge.GenesisOf(ctx, n.st, spaceID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+spaceID)
	}
	var k *seal.Key
	if g.Private() {
		var heads []seal.Head
		if _, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
			heads = h.Now().KeyHeads()
			return nil
		}); err != nil {
			return nil, err
		}
		if k, err = n.sealingKey(ctx, spaceID, n.keys.Keyring(spaceID), heads); err != nil {
			return nil, err
		}
	}
	w, err := n.st.CreateFile(ctx)
	if err != nil {
		return nil, err
	}
	u := &FileUpload{w: w}
	if k != nil {
		u.sealer = seal.NewFileSealer(k, spaceID, w)
	}
	return u, nil
}

// Write adds the file's bytes.
func (u *FileUpload) Write(p []byte) (int, error) {
	var n int
	var err error
	if u.sealer != nil {
		n, err = u.sealer.Write(p)
	} else {
		n, err = u.w.Write(p)
	}
	u.n += int64(n)
	return n, err
}

// Size is the bytes of the file written so far (before sealing).
func (u *FileUpload) Size() int64 { return u.n }

// Keep keeps the file, durably, and returns how a version names it.
func (u *FileUpload) Keep(ctx context.Context) (FileRef, error) {
	if u.sealer != nil {
		if err := u.sealer.Close(); err != nil {
			return FileRef{}, err
		}
	}
	r, err := u.w.Keep(ctx)
	return r, err
}

// Close gives up a file not kept.
func (u *FileUpload) Close() error { return u.w.Close() }

// PutFile keeps a file for a version to name in its files (02 §3.1), and
// returns how it names it. In a private space the file is sealed first
// under the key a body would be (docs/private-spaces.md §4), and the hash
// and size are the sealed file's.
func (n *Node) PutFile(ctx context.Context, spaceID string, data []byte) (FileRef, error) {
	u, err := n.NewFile(ctx, spaceID)
	if err != nil {
		return FileRef{}, err
	}
	defer u.Close()
	if _, err := u.Write(data); err != nil {
		return FileRef{}, err
	}
	return u.Keep(ctx)
}

// OpenedFile is a held file of a space as a reader reads it: in a private
// space, opened (each chunk checked before its bytes are returned).
type OpenedFile struct {
	io.ReaderAt
	r    engine.FileReader
	size int64
}

// Size is the length of the file as read.
func (f *OpenedFile) Size() int64 { return f.size }

// Close releases the file.
func (f *OpenedFile) Close() error { return f.r.Close() }

// OpenFile opens a held file of the space to read; engine.ErrNotFound
// when it is not held, or the space is not; an error wrapping ErrNoKey
// when the node holds no key of the private space it is sealed in.
func (n *Node) OpenFile(ctx context.Context, spaceID string, hash canonical.ID) (*OpenedFile, error) {
	private, held, err := n.privacy(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	if !held {
		// Whether it is sealed is unknown: its bytes are not handed out as
		// the file (a private space's sealed bytes would be, as if public).
		return nil, fmt.Errorf("minca/node: %w: file %s of the space %s, which the node does not hold", engine.ErrNotFound, hash, spaceID)
	}
	r, err := n.st.OpenFile(ctx, hash)
	if err != nil {
		return nil, err
	}
	if !private {
		return &OpenedFile{ReaderAt: r, r: r, size: r.Size()}, nil
	}
	o, err := n.openSealedFile(ctx, spaceID, r)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &OpenedFile{ReaderAt: o, r: r, size: o.Size()}, nil
}

func (n *Node) openSealedFile(ctx context.Context, spaceID string, r engine.FileReader) (*seal.FileOpener, error) {
	ring := n.keys.Keyring(spaceID)
	if ring == nil {
		return nil, fmt.Errorf("minca/node: %w: the node holds no key of the space %s", ErrNoKey, spaceID)
	}
	head := make([]byte, seal.FileHead)
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	id, err := seal.FileKeyID(head)
	if err != nil {
		return nil, err
	}
	k, ok := ring.Key(id)
	if !ok {
		if took, _ := n.takeKeys(ctx, spaceID, id); took {
			k, ok = ring.Key(id)
		}
	}
	if !ok {
		return nil, fmt.Errorf("minca/node: %w: the file is sealed under %s, a key the node does not hold", ErrNoKey, id)
	}
	return seal.NewFileOpener(k, spaceID, r, r.Size())
}

// File returns a file a version of the space names, whole, opened in a
// private space (ErrNoKey without its key); engine.ErrNotFound when not
// held. OpenFile reads it as a stream.
func (n *Node) File(ctx context.Context, spaceID string, hash canonical.ID) ([]byte, error) {
	f, err := n.OpenFile(ctx, spaceID, hash)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]byte, f.Size())
	if k, err := f.ReadAt(out, 0); k < len(out) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return out, nil
}

// RecordFile is a file a record's current version names, and whether the
// node holds it.
type RecordFile struct {
	FileRef
	Held bool `json:"held"`
}

// RecordFiles lists the files the readable current version of the record
// at key names (02 §3.1), each with whether it is held;
// engine.ErrNotFound when the record does not read.
func (n *Node) RecordFiles(ctx context.Context, spaceID, key string) ([]RecordFile, error) {
	v, err := n.st.Current(ctx, spaceID, key)
	if err != nil {
		return nil, err
	}
	out := []RecordFile{}
	for _, f := range v.Files {
		held, err := n.st.HasFile(ctx, f.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, RecordFile{FileRef: f, Held: held})
	}
	return out, nil
}

// fileWants are the files readers asked for and the node does not hold
// (docs/sync.md §7.7: a file asked for is fetched whatever the policy),
// for the node's peers to fetch. Bounded: the oldest ask is forgotten.
type fileWants struct {
	mu    sync.Mutex
	order []canonical.ID
	by    map[canonical.ID]engine.NamedFile
	ch    chan struct{}
}

const maxFileWants = 1024

// WantFile asks for a file of the space the node does not hold to be
// fetched from its peers, whatever its policy: a reader opened it. The
// file must be named by a version of the space the node holds; false
// when none does (there is nothing to fetch it by).
func (n *Node) WantFile(ctx context.Context, spaceID string, hash canonical.ID) (bool, error) {
	found, ok, err := n.st.NamingFile(ctx, spaceID, hash)
	if err != nil || !ok {
		return false, err
	}
	w := &n.wants
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[canonical.ID]engine.NamedFile{}
	}
	if _, ok := w.by[hash]; !ok {
		if len(w.order) >= maxFileWants {
			delete(w.by, w.order[0])
			w.order = w.order[1:]
		}
		w.order = append(w.order, hash)
		w.by[hash] = found
	}
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	return true, nil
}

// FileWants returns the files readers asked for that are still not held,
// oldest first, and a channel closed when another is asked for.
func (n *Node) FileWants(ctx context.Context) ([]engine.NamedFile, <-chan struct{}) {
	w := &n.wants
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []engine.NamedFile
	keep := w.order[:0]
	for _, h := range w.order {
		if held, err := n.st.HasFile(ctx, h); err == nil && held {
			delete(w.by, h)
			continue
		}
		keep = append(keep, h)
		out = append(out, w.by[h])
	}
	w.order = keep
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return out, w.ch
}

// WaitFile waits until the file is held or ctx ends.
func (n *Node) WaitFile(ctx context.Context, hash canonical.ID) error {
	for {
		kept := n.st.FileKept()
		held, err := n.st.HasFile(ctx, hash)
		if err != nil || held {
			return err
		}
		select {
		case <-kept:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second): // a belt: a file kept by another engine of the store
		}
	}
}

// checkFiles refuses a write naming a file the node does not hold, or
// naming it with another size: a version is never written naming bytes
// that are nowhere.
func (n *Node) checkFiles(ctx context.Context, files []FileRef) error {
	for i, f := range files {
		fi, err := n.st.FileInfo(ctx, f.Hash)
		if errors.Is(err, engine.ErrNotFound) {
			return writeErr(CodeFileNotHeld, fmt.Sprintf("files[%d]", i), "the node does not hold the file "+f.Hash.String()+": upload it first (POST /v1/spaces/{space}/files), and name it by the hash and size the upload answered")
		}
		if err != nil {
			return err
		}
		if fi.Size != f.Size {
			return writeErr(CodeFileNotHeld, fmt.Sprintf("files[%d]", i), fmt.Sprintf("the file %s is %d bytes, not %d", f.Hash, fi.Size, f.Size))
		}
	}
	return nil
}
