package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// Files in a blob store (docs/stores.md, Files): a writer keeps the files
// its exported versions name as objects of its own, one per FileChunk
// bytes, files/<writer>/<hash>.<n>, written before the segment naming
// them is published; a reader lacking a file a version it holds whole
// names reads the first writer's complete copy into a partial file and
// keeps it once it checks out.

// FileChunk is the bytes of one file object.
const FileChunk = 4 << 20

// filesPrefix is where file objects live.
const filesPrefix = "files/"

// fileChunkName is the object holding chunk n of the file hash, written
// by writer.
func fileChunkName(writer, hash string, n int64) string {
	return filesPrefix + writer + "/" + hash + "." + strconv.FormatInt(n, 10)
}

// fileChunks is how many objects a file of size takes.
func fileChunks(size int64) int64 { return (size + FileChunk - 1) / FileChunk }

// exportFiles writes the chunks of each file the lines' versions name
// whole that the store holds and this writer has not written yet, before
// the segment holding them is published.
func (m *Mirror) exportFiles(ctx context.Context, lines [][]byte) error {
	done := map[string]bool{}
	for _, l := range lines {
		if !strings.Contains(string(l), `"files":`) {
			continue
		}
		v, err := record.Decode(l)
		if err != nil || v.Body == nil {
			continue // a stub names files its body no longer holds
		}
		for _, f := range engine.FilesOf(v) {
			if done[f.Hash] || f.Size == 0 {
				continue
			}
			done[f.Hash] = true
			if err := m.exportFile(ctx, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// exportFile writes the chunks of one file this writer lacks in the blob
// store; a file the store does not hold (not fetched yet) is skipped.
func (m *Mirror) exportFile(ctx context.Context, f engine.FileRef) error {
	r, err := m.s.OpenFile(ctx, f.Hash)
	if errors.Is(err, engine.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if r.Size() != f.Size {
		return nil
	}
	have := map[string]bool{}
	prefix := filesPrefix + m.w.ID + "/" + f.Hash + "."
	after := ""
	for {
		page, err := m.b.List(ctx, prefix, after, 1000)
		if err != nil {
			return fmt.Errorf("minca/mirror: listing %s: %w", prefix, err)
		}
		for _, b := range page {
			if !b.Pending {
				have[b.Name] = true
			}
			after = b.Name
		}
		if len(page) < 1000 {
			break
		}
	}
	buf := make([]byte, FileChunk)
	for n := range fileChunks(f.Size) {
		name := fileChunkName(m.w.ID, f.Hash, n)
		if have[name] {
			continue
		}
		off := n * FileChunk
		k := min(FileChunk, f.Size-off)
		if _, err := r.ReadAt(buf[:k], off); err != nil && !(errors.Is(err, io.EOF) && int64(len(buf[:k])) == k) {
			return fmt.Errorf("minca/mirror: reading file %s: %w", f.Hash, err)
		}
		if err := m.b.Put(ctx, name, buf[:k]); err != nil && !errors.Is(err, engine.ErrBlobExists) {
			return fmt.Errorf("minca/mirror: writing %s: %w", name, err)
		}
		m.stats.FilesExported++
	}
	return nil
}

// importFiles reads from the blob store each file the store lacks that
// a version it holds whole names: the first writer (by id) whose chunks
// of it are all listed. A copy that is incomplete, unreadable or fails
// its check is named in the log and the next writer's tried; the file
// stays wanted for the next pass or a peer.
func (m *Mirror) importFiles(ctx context.Context) error {
	var missing []engine.NamedFile
	if err := m.s.MissingFiles(ctx, "", func(f engine.NamedFile) bool {
		missing = append(missing, f)
		return true
	}); err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	// hash → writer → chunks listed
	listed := map[string]map[string]int64{}
	after := ""
	for {
		page, err := m.b.List(ctx, filesPrefix, after, 1000)
		if err != nil {
			return fmt.Errorf("minca/mirror: listing files: %w", err)
		}
		for _, b := range page {
			after = b.Name
			parts := strings.Split(strings.TrimPrefix(b.Name, filesPrefix), "/")
			if len(parts) != 2 || b.Pending {
				continue
			}
			hash, _, ok := strings.Cut(parts[1], ".")
			if !ok {
				continue
			}
			if listed[hash] == nil {
				listed[hash] = map[string]int64{}
			}
			listed[hash][parts[0]]++
		}
		if len(page) < 1000 {
			break
		}
	}
	for _, f := range missing {
		var writers []string
		for w, n := range listed[f.Hash] {
			if n >= fileChunks(f.Size) {
				writers = append(writers, w)
			}
		}
		sort.Strings(writers)
		for _, w := range writers {
			err := m.importFile(ctx, w, f.FileRef)
			if err == nil {
				m.stats.FilesImported++
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m.o.Logger.Warn("mirror: a file's copy in the blob store did not read whole and check out; trying the next", "file", f.Hash, "writer", w, "err", err)
		}
	}
	return nil
}

// importFile reads writer's copy of f into its partial file and keeps it
// if it checks out.
func (m *Mirror) importFile(ctx context.Context, writer string, f engine.FileRef) error {
	p, err := m.s.OpenPartial(ctx, f)
	if errors.Is(err, engine.ErrFileHeld) || errors.Is(err, engine.ErrFileBusy) {
		return nil
	}
	if err != nil {
		return err
	}
	defer p.Close()
	// A partial not on a chunk boundary (a peer's) is started again.
	if p.Offset()%FileChunk != 0 {
		if err := p.Discard(); err != nil {
			return err
		}
		if p, err = m.s.OpenPartial(ctx, f); err != nil {
			return err
		}
		defer p.Close()
	}
	for n := p.Offset() / FileChunk; n < fileChunks(f.Size); n++ {
		b, err := m.b.Get(ctx, fileChunkName(writer, f.Hash, n))
		if err != nil {
			return err
		}
		if want := min(FileChunk, f.Size-n*FileChunk); int64(len(b)) != want {
			p.Discard()
			return fmt.Errorf("chunk %d is %d bytes, not %d", n, len(b), want)
		}
		if _, err := p.Write(b); err != nil {
			return err
		}
	}
	return p.Keep(ctx)
}
