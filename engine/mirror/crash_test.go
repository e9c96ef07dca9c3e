package mirror_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/filedir"
	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

const envMirrorChild = "MINCA_MIRROR_CRASH_CHILD"

// A process killed (SIGKILL) while exporting, while compacting, and while
// writing and deleting file copies, leaves nothing half-published in the
// folder and loses nothing: after the last kill, the restarted store
// finishes what was pending, a new store reading the folder holds every
// version the killed ones acknowledged, and every file a held version
// names whole — and no chunk of a file nothing names.
func TestMirrorCrash(t *testing.T) {
	if mode := os.Getenv(envMirrorChild); mode != "" {
		mirrorChild(t, mode, os.Getenv("MINCA_MIRROR_CRASH_DIR"))
		return
	}
	for _, mode := range []string{"export", "compact", "files"} {
		t.Run(mode, func(t *testing.T) { mirrorCrash(t, mode) })
	}
}

func openDisk(t testing.TB, dir string) (*engine.Store, *folder.Store) {
	kv, err := pebble.Open(filepath.Join(dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}, Files: filedir.Open(filepath.Join(dir, "files"))})
	if err != nil {
		t.Fatal(err)
	}
	b, err := folder.Open(filepath.Join(dir, "folder"), &folder.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// mirrorChild writes versions and exports (and compacts) them until killed,
// printing "ack ID" for each version the store acknowledged.
func mirrorChild(t *testing.T, mode, dir string) {
	s, b := openDisk(t, dir)
	o := &mirror.Options{CompactAt: -1, BatchVersions: 50}
	switch mode {
	case "compact":
		o.CompactAt = 3
	case "files":
		o.FileGrace = time.Millisecond // each pass deletes what went unnamed
	}
	m, err := mirror.New(s, b, o)
	if err != nil {
		t.Fatal(err)
	}
	w, err := enginetest.NewWriter(enginetest.SpaceID("mirror crash"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	out := bufio.NewWriter(os.Stdout)
	var tops []*record.Version
	for n := 0; ; {
		var batch []*record.Version
		for range 1 + r.IntN(30) {
			var v *record.Version
			var opts []enginetest.Opt
			if mode == "files" && r.IntN(2) == 0 {
				// A file of up to two chunks, named by the version; the
				// one it supersedes may have named another, now unnamed.
				data := make([]byte, 1+r.IntN(2*mirror.FileChunk))
				var seed [32]byte
				for i := range seed {
					seed[i] = byte(r.Uint32())
				}
				rand.NewChaCha8(seed).Read(data)
				f := fileRef(data)
				if err := s.PutFile(ctx, f.Hash, data); err != nil {
					t.Fatal(err)
				}
				opts = append(opts, naming(f))
			}
			if len(tops) > 0 && r.IntN(3) > 0 {
				i := r.IntN(len(tops))
				v, err = w.Next(tops[i], enginetest.Body(r, n), opts...)
				tops[i] = v
			} else {
				v, err = w.First("app.note", enginetest.Body(r, n), opts...)
				tops = append(tops, v)
			}
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, v)
			n++
		}
		outs, err := s.Admit(ctx, "local", batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if o.Verdict == engine.Stands {
				fmt.Fprintln(out, "ack", o.ID)
			}
		}
		out.Flush()
		if err := m.Round(ctx); err != nil {
			fmt.Println("round:", err)
			os.Exit(1)
		}
	}
}

func mirrorCrash(t *testing.T, mode string) {
	kills := 6
	if testing.Short() || race.Enabled { // each kill starts a child, slow to start under -race
		kills = 2
	}
	dir := t.TempDir()
	acked := map[string]bool{}
	for k := 0; k < kills; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMirrorCrash$", "-test.count=1")
		cmd.Env = append(os.Environ(), envMirrorChild+"="+mode, "MINCA_MIRROR_CRASH_DIR="+dir)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		deadline := time.After(time.Duration(150+rand.IntN(500)) * time.Millisecond)
		seen := 0
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				if id, ok := strings.CutPrefix(l, "ack "); ok {
					acked[id] = true
					seen++
				} else {
					t.Fatalf("child: %s", l)
				}
			case <-deadline:
				if seen > 0 {
					break wait
				}
				deadline = time.After(50 * time.Millisecond)
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines {
			if id, ok := strings.CutPrefix(l, "ack "); ok {
				acked[id] = true
			}
		}
		_ = cmd.Wait()
		checkPublished(t, filepath.Join(dir, "folder"))
	}
	// Restart: the store settles what was pending and exports the rest.
	s, b := openDisk(t, dir)
	defer s.Close()
	m, err := mirror.New(s, b, &mirror.Options{CompactAt: 2, FileGrace: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	checkPublished(t, filepath.Join(dir, "folder"))
	if mode == "files" {
		checkFiles(t, s, b, m)
	}
	fresh := newStore(t)
	fm := newMirror(t, fresh, b, nil)
	if _, err := fm.Import(ctx); err != nil {
		t.Fatal(err)
	}
	held := heldSet(t, fresh)
	for id := range acked {
		if _, ok := held[id]; !ok {
			t.Fatalf("acknowledged version %s is not in the folder", id)
		}
	}
	sameHeld(t, s, fresh, "the store and a store reading its folder")
	t.Logf("%s: %d kills, %d versions acknowledged, %d held", mode, kills, len(acked), len(held))
}

// checkPublished: every file under a grammar name decodes whole.
func checkPublished(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !engine.ValidBlobName(rel) || !strings.HasPrefix(rel, "segments/") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := mirror.DecodeSegment(data); err != nil {
			t.Fatalf("%s is published half-written: %v", rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkFiles: after a files pass, every file a version the store holds
// whole names is in the folder whole, and nothing else is: what a killed
// pass wrote in part is completed, what it was deleting is gone.
func checkFiles(t *testing.T, s *engine.Store, b engine.Blobs, m *mirror.Mirror) {
	t.Helper()
	time.Sleep(2 * time.Millisecond) // past the grace of what the last round retired
	if _, err := m.TidyFiles(ctx); err != nil {
		t.Fatal(err)
	}
	named := map[canonical.ID]bool{}
	if err := s.NamedFiles(ctx, "", func(f engine.NamedFile) bool { named[f.Hash] = true; return true }); err != nil {
		t.Fatal(err)
	}
	infos, err := b.List(ctx, "files/", "", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		parts := strings.Split(strings.TrimPrefix(i.Name, "files/"), "/")
		hash, _, _ := strings.Cut(parts[len(parts)-1], ".")
		if d, err := canonical.ParseID(hash); err != nil || !named[d] {
			t.Fatalf("%s: a chunk of a file nothing names, past the grace", i.Name)
		}
	}
	fresh := newStore(t)
	if _, err := newMirror(t, fresh, b, nil).Import(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for hash := range named {
		want, err := s.File(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := fresh.File(ctx, hash); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("file %s read from the folder: %v", hash, err)
		}
		n++
	}
	t.Logf("files: %d named, all in the folder whole; %d chunks", n, len(infos))
}
