package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
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
	done := map[canonical.ID]bool{}
	for _, l := range lines {
		if !strings.Contains(string(l), `"files":`) {
			continue
		}
		v, err := record.Decode(l)
		if err != nil || v.Body == nil {
			continue // a stub names files its body no longer holds
		}
		for _, f := range v.Files {
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
	hash := f.Hash.String() // as object names carry it
	copies, err := m.listFileCopies(ctx, filesPrefix+m.w.ID+"/"+hash+".")
	if err != nil {
		return err
	}
	have := copies[hash][m.w.ID]
	buf := make([]byte, FileChunk)
	for n := range fileChunks(f.Size) {
		if have[n] {
			continue
		}
		name := fileChunkName(m.w.ID, hash, n)
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
	copies, err := m.listFileCopies(ctx, filesPrefix)
	if err != nil {
		return err
	}
	for _, f := range missing {
		var writers []string
		for w, c := range copies[f.Hash.String()] {
			if c.whole(f.Size) {
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
		b, err := m.b.Get(ctx, fileChunkName(writer, f.Hash.String(), n))
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

// fileCopy is the chunks of one file one writer has in the blob store,
// as listed: their indices.
type fileCopy map[int64]bool

// whole reports whether every chunk of a file of size is there.
func (c fileCopy) whole(size int64) bool {
	for n := range fileChunks(size) {
		if !c[n] {
			return false
		}
	}
	return true
}

// listFileCopies lists the file chunks under prefix (within files/),
// by file and writer. Names outside the grammar, and objects still
// arriving (F3), are passed over.
func (m *Mirror) listFileCopies(ctx context.Context, prefix string) (map[string]map[string]fileCopy, error) {
	copies := map[string]map[string]fileCopy{}
	after := ""
	for {
		page, err := m.b.List(ctx, prefix, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("minca/mirror: listing %s: %w", prefix, err)
		}
		for _, b := range page {
			after = b.Name
			w, hash, n, ok := parseFileChunk(b.Name)
			if !ok || b.Pending {
				continue
			}
			if copies[hash] == nil {
				copies[hash] = map[string]fileCopy{}
			}
			if copies[hash][w] == nil {
				copies[hash][w] = fileCopy{}
			}
			copies[hash][w][n] = true
		}
		if len(page) < 1000 {
			return copies, nil
		}
	}
}

// parseFileChunk reads files/<writer>/<hash>.<n>; n decimal with no
// leading zero.
func parseFileChunk(name string) (writer, hash string, n int64, ok bool) {
	rest, ok := strings.CutPrefix(name, filesPrefix)
	if !ok {
		return "", "", 0, false
	}
	writer, rest, ok = strings.Cut(rest, "/")
	if !ok || !segment.ValidWriterID(writer) {
		return "", "", 0, false
	}
	hash, num, ok := strings.Cut(rest, ".")
	if !ok || hash == "" || strings.Contains(num, ".") || (len(num) > 1 && num[0] == '0') {
		return "", "", 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || num[0] == '+' {
		return "", "", 0, false
	}
	return writer, hash, n, true
}
