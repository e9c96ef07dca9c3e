package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/canonical"
)

// PartialFile is a file being fetched in pieces, from a peer or a blob
// store (docs/sync.md §7.7): its bytes grow in order, durably, across
// dropped links and restarts, and it is held only once whole and checked
// against its hash and size. One caller at a time writes a file's partial.
type PartialFile struct {
	s    *Store
	ref  FileRef
	d    canonical.ID
	t    FileTemp
	h    hash.Hash
	n    int64
	done bool
	// broken: a Write fell short after its bytes were hashed; the file
	// is not kept, and the next OpenPartial hashes what was written.
	broken bool
	// The file's hasher (WriteHashAside): jobs are hashed in order on a
	// goroutine of the file's own; pending counts those not yet hashed.
	jobs    chan *hashJob
	pending sync.WaitGroup
}

// hashJob is bytes a WriteHashAside wrote or is writing, to be hashed;
// release is called once both are done (left reaches 0).
type hashJob struct {
	b       []byte
	left    atomic.Int32
	release func()
}

func (j *hashJob) finish() {
	if j.left.Add(-1) == 0 {
		j.release()
	}
}

// ErrFileTooLong: bytes past the size the file is named with.
var ErrFileTooLong = errors.New("minca/engine: bytes past the file's size")

// OpenPartial opens the partial file of ref to go on writing it where it
// stopped ([PartialFile.Offset]); its bytes so far are read once to hash
// them. ErrFileHeld when the file is held; ErrFileBusy while another
// caller has it open. The caller closes it.
func (s *Store) OpenPartial(ctx context.Context, ref FileRef) (*PartialFile, error) {
	d := ref.Hash
	if ref.Size < 0 || ref.Size > MaxFileSize {
		return nil, fmt.Errorf("%w: %s of %d bytes is not a file's name", ErrFileMismatch, ref.Hash, ref.Size)
	}
	if err := s.writable(); err != nil {
		return nil, err
	}
	if held, err := s.HasFile(ctx, ref.Hash); err != nil {
		return nil, err
	} else if held {
		return nil, ErrFileHeld
	}
	s.state.Lock()
	if s.partials == nil {
		s.partials = map[canonical.ID]bool{}
	}
	busy := s.partials[d]
	s.partials[d] = true
	s.state.Unlock()
	if busy {
		return nil, ErrFileBusy
	}
	p := &PartialFile{s: s, ref: ref, d: d, h: sha256.New()}
	if err := p.open(ctx); err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}

// open opens the partial on disk and hashes what it holds; a partial
// longer than the file is started again.
func (p *PartialFile) open(ctx context.Context) error {
	dir := p.s.files()
	t, err := dir.Partial(p.ref.Hash)
	if err != nil {
		return fmt.Errorf("minca/engine: partial file %s: %w", p.ref.Hash, err)
	}
	if t.Size() > p.ref.Size {
		t.Close()
		if err := dir.RemovePartial(p.ref.Hash); err != nil {
			return err
		}
		if t, err = dir.Partial(p.ref.Hash); err != nil {
			return err
		}
	}
	p.t = t
	if t.Size() == 0 {
		return nil
	}
	buf := make([]byte, min(1<<20, t.Size()))
	for p.n < t.Size() {
		if err := ctx.Err(); err != nil {
			t.Close()
			return err
		}
		n, err := t.ReadAt(buf[:min(int64(len(buf)), t.Size()-p.n)], p.n)
		p.h.Write(buf[:n])
		p.n += int64(n)
		if err != nil && !(errors.Is(err, io.EOF) && p.n == t.Size()) {
			t.Close()
			return fmt.Errorf("minca/engine: partial file %s: %w", p.ref.Hash, err)
		}
	}
	return nil
}

func (p *PartialFile) release() {
	p.s.state.Lock()
	delete(p.s.partials, p.d)
	p.s.state.Unlock()
}

// Ref is the file being fetched.
func (p *PartialFile) Ref() FileRef { return p.ref }

// Offset is the bytes held so far: where the next Write goes.
func (p *PartialFile) Offset() int64 { return p.n }

// Write appends the file's next bytes. Bytes past its size are
// ErrFileTooLong, and none of them is written.
func (p *PartialFile) Write(b []byte) (int, error) {
	if p.done || p.broken {
		return 0, errTempClosed
	}
	if int64(len(b)) > p.ref.Size-p.n {
		return 0, fmt.Errorf("%w: %d bytes at %d of a file of %d", ErrFileTooLong, len(b), p.n, p.ref.Size)
	}
	// Bytes before these may still wait for the file's hasher.
	p.hashed(false)
	if len(b) < hashAsideFrom {
		n, err := p.t.Write(b)
		p.h.Write(b[:n])
		p.n += int64(n)
		return n, err
	}
	// Hashed while written: the two are the receiving end's work for
	// each byte, and side by side they take the time of the longer.
	hashed := make(chan struct{})
	go func() {
		p.h.Write(b)
		close(hashed)
	}()
	n, err := p.t.Write(b)
	<-hashed
	p.n += int64(n)
	if n < len(b) {
		// The hash took bytes that were not written: nothing more is.
		p.broken = true
		if err == nil {
			err = io.ErrShortWrite
		}
	}
	return n, err
}

// hashAsideFrom is the least a Write hashes beside writing it.
const hashAsideFrom = 64 << 10

// WriteHashAside appends the file's next bytes, as Write, and hashes them
// in order on the file's own hasher, beside this write and the next: the
// caller does not wait for the hash, which keeps one core busy with a
// large file's hash while the writes go on. b is the file's until release
// is called, once it is written and hashed (always exactly once, an error
// included). What waits to be hashed is what the caller has not had
// released: a caller bounding its buffers bounds it.
func (p *PartialFile) WriteHashAside(b []byte, release func()) (int, error) {
	if p.done || p.broken {
		release()
		return 0, errTempClosed
	}
	if int64(len(b)) > p.ref.Size-p.n {
		release()
		return 0, fmt.Errorf("%w: %d bytes at %d of a file of %d", ErrFileTooLong, len(b), p.n, p.ref.Size)
	}
	if p.jobs == nil {
		if len(b) < hashAsideFrom {
			n, err := p.Write(b)
			release()
			return n, err
		}
		p.jobs = make(chan *hashJob, hashQueue)
		go p.hashJobs(p.jobs)
	}
	j := &hashJob{b: b, release: release}
	j.left.Store(2)
	p.pending.Add(1)
	p.jobs <- j
	n, err := p.t.Write(b)
	p.n += int64(n)
	j.finish()
	if n < len(b) {
		p.broken = true
		if err == nil {
			err = io.ErrShortWrite
		}
	}
	return n, err
}

// WriteHashAsideAll is WriteHashAside for several chunks in a row: each
// is hashed on the file's hasher, and all are written with one write
// where the FileDir can (a [VectorWriter]), else one after another.
// release[i] is called once bs[i] is written and hashed (always exactly
// once, an error included). A partial file whose chunks a peer sends
// faster than the disk takes them writes what came meanwhile at once:
// the disk then has several MiB of the file in flight, not one chunk.
func (p *PartialFile) WriteHashAsideAll(bs [][]byte, release []func()) (int, error) {
	if len(bs) == 1 {
		return p.WriteHashAside(bs[0], release[0])
	}
	total := 0
	for _, b := range bs {
		total += len(b)
	}
	if p.done || p.broken || int64(total) > p.ref.Size-p.n {
		for _, r := range release {
			r()
		}
		if p.done || p.broken {
			return 0, errTempClosed
		}
		return 0, fmt.Errorf("%w: %d bytes at %d of a file of %d", ErrFileTooLong, total, p.n, p.ref.Size)
	}
	if p.jobs == nil {
		p.jobs = make(chan *hashJob, hashQueue)
		go p.hashJobs(p.jobs)
	}
	js := make([]*hashJob, len(bs))
	for i, b := range bs {
		js[i] = &hashJob{b: b, release: release[i]}
		js[i].left.Store(2)
		p.pending.Add(1)
		p.jobs <- js[i]
	}
	var n int
	var err error
	if vw, ok := p.t.(VectorWriter); ok {
		n, err = vw.WriteV(bs)
	} else {
		for _, b := range bs {
			var k int
			k, err = p.t.Write(b)
			n += k
			if err != nil || k < len(b) {
				break
			}
		}
	}
	p.n += int64(n)
	for _, j := range js {
		j.finish()
	}
	if n < total {
		p.broken = true
		if err == nil {
			err = io.ErrShortWrite
		}
	}
	return n, err
}

// VectorWriter is a [FileTemp] that writes several buffers in a row with
// one write (pwritev(2)): a FileDir on a local disk.
type VectorWriter interface {
	// WriteV appends the bytes of bs, in order, as Write would each;
	// fewer than all of them with an error.
	WriteV(bs [][]byte) (int, error)
}

// hashQueue is how many writes may wait for the file's hasher before a
// WriteHashAside waits for it.
const hashQueue = 16

// hashJobs is the file's hasher: it hashes what WriteHashAside wrote, in
// order, until jobs is closed.
func (p *PartialFile) hashJobs(jobs <-chan *hashJob) {
	for j := range jobs {
		p.h.Write(j.b)
		j.finish()
		p.pending.Done()
	}
}

// hashed waits until every byte written is hashed, and stops the hasher
// when stop.
func (p *PartialFile) hashed(stop bool) {
	p.pending.Wait()
	if stop && p.jobs != nil {
		close(p.jobs)
		p.jobs = nil
	}
}

// Sync makes the bytes written so far durable.
func (p *PartialFile) Sync() error { return p.t.Sync() }

// Keep checks the whole file against its hash and size and keeps it, held
// from then on. A file that does not check is ErrFileMismatch, and its
// partial is deleted: its bytes are never read again. The PartialFile is
// closed either way.
func (p *PartialFile) Keep(ctx context.Context) error {
	if p.done {
		return errTempClosed
	}
	p.done = true
	defer p.release()
	p.hashed(true)
	if p.broken {
		p.t.Close()
		return fmt.Errorf("minca/engine: partial file %s: a write fell short", p.ref.Hash)
	}
	if p.n != p.ref.Size || canonical.ID(p.h.Sum(nil)) != p.d {
		p.t.Close()
		if err := p.s.files().RemovePartial(p.ref.Hash); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s: %d bytes that do not hash to it", ErrFileMismatch, p.ref.Hash, p.n)
	}
	if err := p.t.Keep(p.ref.Hash); err != nil {
		return fmt.Errorf("minca/engine: keep file %s: %w", p.ref.Hash, err)
	}
	return p.s.recordFile(p.d, p.ref.Size)
}

// Discard deletes the partial file: its bytes are not to be trusted.
func (p *PartialFile) Discard() error {
	if p.done {
		return nil
	}
	p.done = true
	defer p.release()
	p.hashed(true)
	p.t.Close()
	return p.s.files().RemovePartial(p.ref.Hash)
}

// Close stops writing, keeping the bytes written (synced) for the next
// OpenPartial. After Keep or Discard it does nothing.
func (p *PartialFile) Close() error {
	if p.done {
		return nil
	}
	p.done = true
	defer p.release()
	p.hashed(true)
	err := p.t.Sync()
	if cerr := p.t.Close(); err == nil {
		err = cerr
	}
	return err
}
