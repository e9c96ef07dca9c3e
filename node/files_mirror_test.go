package node_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minca-go/minca/node"
)

// A file a version names goes to the data folder before the segment that
// names it, in chunks of the writer's own; another node on the folder
// reads it back whole, and a private space's chunks hold no plaintext.
func TestFilesTravelThroughAFolder(t *testing.T) {
	for _, private := range []bool{false, true} {
		t.Run(map[bool]string{false: "public", true: "private"}[private], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			folder := "folder:" + dir
			a := newNode(t, &node.Options{Mirrors: []string{folder}})
			g, err := a.CreateSpace(ctx, "album", &node.CreateOptions{Private: private})
			if err != nil {
				t.Fatal(err)
			}
			const marker = "PLAINTEXT-MARKER-90d1"
			data := append(noise(9<<20+11, 5), []byte(marker)...)
			f, err := a.PutFile(ctx, g.ID, data)
			if err != nil {
				t.Fatal(err)
			}
			v := put(t, a, g.ID, "app.photo", obj("t", 1), &node.PutOptions{Files: []node.FileRef{f}})
			if err := a.Close(); err != nil { // the mirror exports all it holds
				t.Fatal(err)
			}
			chunks, _ := filepath.Glob(filepath.Join(dir, "files", "*", f.Hash.String()+".*"))
			if len(chunks) != 3 {
				t.Fatalf("the folder holds %d chunks of the file, want 3", len(chunks))
			}
			if private {
				for _, c := range chunks {
					b, _ := os.ReadFile(c)
					if bytes.Contains(b, []byte(marker)) {
						t.Fatalf("%s holds the private file's plaintext", c)
					}
				}
			}
			var b *testNode
			if private {
				// The same device restored from the folder: its store gone,
				// its keys kept in its directory.
				if err := os.RemoveAll(filepath.Join(a.dir, "store")); err != nil {
					t.Fatal(err)
				}
				a.open(&node.Options{Mirrors: []string{folder}})
				b = a
			} else {
				b = newNode(t, &node.Options{Mirrors: []string{folder}})
				if err := b.JoinGenesis(ctx, g); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(60 * time.Second)
			for {
				got, err := b.File(ctx, g.ID, f.Hash)
				if err == nil {
					if !bytes.Equal(got, data) {
						t.Fatal("the file read back from the folder differs")
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the file did not come back from the folder: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if files, err := b.RecordFiles(ctx, g.ID, v.Key); err != nil || len(files) != 1 || !files[0].Held {
				t.Fatalf("the record's files on b: %+v (%v)", files, err)
			}
		})
	}
}
