package node_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
)

// noise is n bytes of a fixed pseudo-random stream.
func noise(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// A file written as a stream in pieces is kept under the content id of its
// bytes, read back whole and by range, named by a version, and listed as
// held with the record.
func TestFileUploadStreamsAndNames(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("photos", writerRoles)
	data := noise(3<<20+17, 1)

	u, err := tn.NewFile(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := io.CopyBuffer(u, bytes.NewReader(data), make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	f, err := u.Keep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := canonical.IDOf(data); f.Hash != want || f.Size != int64(len(data)) {
		t.Fatalf("the upload answered %+v, want %s of %d bytes", f, want, len(data))
	}
	o, err := tn.OpenFile(ctx, g.ID, f.Hash)
	if err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 5000)
	if _, err := o.ReadAt(part, 1<<20+3); err != nil || !bytes.Equal(part, data[1<<20+3:1<<20+5003]) || o.Size() != int64(len(data)) {
		t.Fatalf("a range of the file reads wrong (%v)", err)
	}
	o.Close()

	v := put(t, tn, g.ID, "app.photo", obj("title", "sea"), &node.PutOptions{Files: []node.FileRef{f}})
	got, err := tn.RecordFiles(ctx, g.ID, v.Key)
	if err != nil || len(got) != 1 || got[0].Hash != f.Hash || got[0].Size != f.Size || !got[0].Held {
		t.Fatalf("the record lists its files as %+v (%v)", got, err)
	}
	whole, err := tn.File(ctx, g.ID, f.Hash)
	if err != nil || !bytes.Equal(whole, data) {
		t.Fatalf("the file reads back other bytes (%v)", err)
	}
}

// A write naming a file the node does not hold, or naming a held file with
// another size, is refused before anything is written: a version never
// names bytes that are nowhere.
func TestPutRefusesFilesNotHeld(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("photos", writerRoles)
	missing := canonical.IDOf([]byte("never uploaded"))
	_, err := tn.Put(ctx, g.ID, "app.photo", obj("t", 1), &node.PutOptions{Files: []node.FileRef{{Hash: missing, Size: 14}}})
	if we := wantCode(t, err, node.CodeFileNotHeld); we.Field != "files[0]" {
		t.Fatalf("the refusal names %q", we.Field)
	}
	f, err := tn.PutFile(ctx, g.ID, []byte("four"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tn.Put(ctx, g.ID, "app.photo", obj("t", 1), &node.PutOptions{Files: []node.FileRef{f, {Hash: f.Hash, Size: 5}}})
	if we := wantCode(t, err, node.CodeFileNotHeld); we.Field != "files[1]" {
		t.Fatalf("the refusal names %q", we.Field)
	}
	if _, err := tn.RecordFiles(ctx, g.ID, "nothing-here"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the files of a record never written: %v", err)
	}
}

// In a private space a file is sealed as it is written: the store holds no
// byte of the plaintext, the name is the sealed file's, and the node opens
// it whole and by any range.
func TestPrivateFileSealedInChunks(t *testing.T) {
	ctx := context.Background()
	tn, g := privateNode(t, nil, writerRoles)
	const marker = "PLAINTEXT-MARKER-2c81"
	data := append(noise(200<<10, 2), []byte(marker)...)
	data = append(data, noise(100<<10, 3)...)
	f, err := tn.PutFile(ctx, g.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tn.Store().File(ctx, f.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if canonical.IDOf(raw) != f.Hash || int64(len(raw)) != f.Size || f.Size <= int64(len(data)) {
		t.Fatalf("the name %+v is not the sealed file's (%d bytes)", f, len(raw))
	}
	if bytes.Contains(raw, []byte(marker)) {
		t.Fatal("the store holds the private file's plaintext")
	}
	o, err := tn.OpenFile(ctx, g.ID, f.Hash)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(data)) {
		t.Fatalf("the opened file is %d bytes, want %d", o.Size(), len(data))
	}
	at := int64(200<<10) - 10
	part := make([]byte, 100)
	if _, err := o.ReadAt(part, at); err != nil || !bytes.Equal(part, data[at:at+100]) {
		t.Fatalf("a range across chunks opens wrong (%v)", err)
	}
	whole, err := tn.File(ctx, g.ID, f.Hash)
	if err != nil || !bytes.Equal(whole, data) {
		t.Fatalf("the file opens to other bytes (%v)", err)
	}
}

// WaitFile returns once the file is held, and with the context's error when
// it never is.
func TestWaitFile(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("photos", writerRoles)
	data := []byte("arrives later")
	hash := canonical.IDOf(data)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := tn.WaitFile(short, hash); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a file never kept: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- tn.WaitFile(ctx, hash) }()
	time.Sleep(20 * time.Millisecond)
	if _, err := tn.PutFile(ctx, g.ID, data); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("WaitFile did not return once the file was kept")
	}
}

// A held file read as a file of a space the node does not hold is not
// found, naming the space: whether it is sealed is unknown there, and a
// private space's sealed bytes are never handed out as the file.
func TestFileOfASpaceNotHeld(t *testing.T) {
	ctx := context.Background()
	tn, g := privateNode(t, nil, writerRoles)
	f, err := tn.PutFile(ctx, g.ID, []byte("a private file's bytes"))
	if err != nil {
		t.Fatal(err)
	}
	other := newNode(t, nil).space("elsewhere", writerRoles)
	for what, read := range map[string]func() error{
		"File":     func() error { _, err := tn.File(ctx, other.ID, f.Hash); return err },
		"OpenFile": func() error { _, err := tn.OpenFile(ctx, other.ID, f.Hash); return err },
	} {
		if err := read(); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), other.ID) {
			t.Fatalf("%s of a held file in a space not held: %v", what, err)
		}
	}
	if _, err := tn.File(ctx, g.ID, f.Hash); err != nil {
		t.Fatalf("the file in its own space: %v", err)
	}
}
