package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine/mirror"
)

// A private space through the verbs: space create --private, put and get
// through the node; minca backup writes only sealed content; restore into
// a node holding the key reads it; restore into a store without the key
// succeeds and keeps it sealed.
func TestPrivateSpaceVerbsAndBackups(t *testing.T) {
	t.Parallel()
	const marker = "PRIVATE-MARKER-c0ffee"
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if _, c := nodeCLI(t, "", "init", "--dir", d); c != 0 {
			t.Fatal("init")
		}
	}
	out, c := nodeCLI(t, "", "space", "create", "diary", "--private", "--dir", a, "--roles", `{"writer":[{"cmd":"/record"}]}`)
	if c != 0 {
		t.Fatal("space create --private")
	}
	sp := jsonField(t, out, "id")
	genesis := out
	if !strings.Contains(out, `"visibility":"private"`) || !strings.Contains(out, `"encryptionKeyId"`) {
		t.Fatalf("space create --private printed %q", out)
	}
	out, c = nodeCLI(t, `{"text":"`+marker+`"}`, "put", sp, "app.entry", "--dir", a)
	if c != 0 || strings.Contains(out, marker) {
		t.Fatalf("put printed %q (exit %d): the signed version shows no plaintext", out, c)
	}
	key := jsonField(t, out, "key")
	out, c = nodeCLI(t, "", "get", sp, key, "--dir", a)
	if c != 0 || openedText(t, out) != marker {
		t.Fatalf("get: %d %q", c, out)
	}
	out, c = nodeCLI(t, "", "history", sp, key, "--dir", a)
	if c != 0 || strings.Count(out, `"opened":{"body":{"text":"`+marker+`"}}`) != 1 {
		t.Fatalf("history: %d %q", c, out)
	}
	out, c = nodeCLI(t, "", "query", sp, `{"collection":"app.entry","where":{"text":"`+marker+`"}}`, "--dir", a)
	if c != 0 || strings.Count(out, marker) != 1 {
		t.Fatalf("query over the opened body: %d %q", c, out)
	}
	// Bob joins by an invite, which carries the key in use.
	out, _ = nodeCLI(t, "", "space", "invite", sp, "--role", "writer", "--dir", a)
	if _, c = nodeCLI(t, "", "space", "join", jsonField(t, out, "invite"), "--dir", b); c != 0 {
		t.Fatal("join")
	}

	bk := t.TempDir()
	if _, c = nodeCLI(t, "", "backup", "--store", "pebble:"+filepath.Join(a, "store"), "--to", "folder:"+bk); c != 0 {
		t.Fatal("backup")
	}
	segments := 0
	filepath.WalkDir(bk, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		texts := [][]byte{raw}
		if lines, err := mirror.DecodeSegment(raw); err == nil {
			segments++
			texts = append(texts, lines...)
		}
		for _, x := range texts {
			if bytes.Contains(x, []byte(marker)) {
				t.Errorf("the backup's %s holds the plaintext", p)
			}
		}
		return nil
	})
	if segments == 0 {
		t.Fatal("the backup wrote no segment")
	}

	// Into Bob's node, which holds the key: the entry reads.
	if _, c = nodeCLI(t, "", "restore", "--from", "folder:"+bk, "--store", "pebble:"+filepath.Join(b, "store")); c != 0 {
		t.Fatal("restore into the member's node")
	}
	out, c = nodeCLI(t, "", "get", sp, key, "--dir", b)
	if c != 0 || openedText(t, out) != marker {
		t.Fatalf("get after restore, with the key: %d %q", c, out)
	}

	// Into a store with no key at all: restored, and sealed.
	bare := "pebble:" + filepath.Join(t.TempDir(), "bare")
	if _, c = nodeCLI(t, "", "restore", "--from", "folder:"+bk, "--store", bare); c != 0 {
		t.Fatal("restore without the key")
	}
	if _, c = nodeCLI(t, genesis, "space", "join", "-", "--store", bare); c != 0 {
		t.Fatal("the genesis into the bare store")
	}
	out, c = nodeCLI(t, "", "store", "get", "--store", bare, sp, key)
	if c != 0 || strings.Contains(out, marker) || !strings.Contains(out, `"sealed"`) || strings.Contains(out, `"opened"`) {
		t.Fatalf("store get without the key: %d %q", c, out)
	}
}

// openedText is the opened body's text of a version as the node's reads
// give it.
func openedText(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		Body   map[string]any
		Opened struct{ Body map[string]any }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not a version: %q", out)
	}
	if _, sealed := v.Body["sealed"]; !sealed {
		t.Fatalf("the body is not sealed: %q", out)
	}
	s, _ := v.Opened.Body["text"].(string)
	return s
}
