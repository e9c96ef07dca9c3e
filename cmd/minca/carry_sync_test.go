//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

// startNode runs `minca serve --dir dir args…` as a process until the
// test ends or stopWith stops it.
func startNode(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	path, env := mincaCommand(t)
	cmd := exec.Command(path, append([]string{"serve", "--dir", dir, "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("minca serve --dir %s said:\n%s", dir, stderr.String())
		}
	})
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("serve printed nothing: %v %s", err, stderr.String())
	}
	return cmd
}

// carrierSession is the session of spaceID between the node serving dir
// and the carrier did, as `minca peers` shows it (ok false while none).
func carrierSession(t *testing.T, dir, did, spaceID string) (peers.SessionStatus, bool) {
	out, _, code := minca(t, "", "peers", "--dir", dir)
	if code != 0 {
		return peers.SessionStatus{}, false
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var st peers.Status
		if json.Unmarshal([]byte(l), &st) != nil || st.Peer != did {
			continue
		}
		for _, s := range st.Sessions {
			if s.Space == spaceID && s.Ended == "" {
				return s, true
			}
		}
	}
	return peers.SessionStatus{}, false
}

// eventually retries f every 200 ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(200 * time.Millisecond) {
		if f() {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("after %v: %s", d, what)
		}
	}
}

// minca carry keeps a private space available between two devices of the
// account that are never online at the same time (issue 17's "done
// when"), all real processes meeting at a relay: the first device writes
// (once before it serves, once while the carrier is connected) and stops;
// the second, new, starts with nothing but the account key, gets the
// registry and the private space from the carrier alone, and reads both
// records opened. The carrier's store — a folder, so its bytes can be
// read — holds the public control's text and none of the private space's.
func TestCarryKeepsPrivateSpaceBetweenDevicesNeverOnlineTogether(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	const secret, public = "SECRET-carried-7d1e", "PUBLIC-carried-7d1e"
	rk, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	relay, err := transport.NewRelay(&transport.Options{Self: transport.Carrier(rk)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	mux := http.NewServeMux()
	mux.Handle(transport.PathRelay, relay)
	ln, err := transport.Listen("127.0.0.1:0", mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	relayURL := ln.URL(transport.PathRelay)

	a, b, cdir, cstore := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "carrier"), t.TempDir()
	if _, c := nodeCLI(t, "", "init", "--dir", a); c != 0 {
		t.Fatal("init a")
	}
	roles := `{"writer":[{"cmd":"/record"}]}`
	out, c := nodeCLI(t, "", "space", "create", "diary", "--private", "--roles", roles, "--dir", a)
	if c != 0 {
		t.Fatal("space create --private")
	}
	priv := jsonField(t, out, "id")
	out, c = nodeCLI(t, "", "space", "create", "notice board", "--roles", roles, "--dir", a)
	if c != 0 {
		t.Fatal("space create")
	}
	pub := jsonField(t, out, "id")
	out, c = nodeCLI(t, `{"text":"`+secret+` before"}`, "put", priv, "app.entry", "--dir", a)
	if c != 0 {
		t.Fatal("put")
	}
	before := jsonField(t, out, "key")
	if _, c = nodeCLI(t, `{"text":"`+public+`"}`, "put", pub, "app.entry", "--dir", a); c != 0 {
		t.Fatal("put public")
	}
	if err := os.MkdirAll(cdir, 0o700); err != nil {
		t.Fatal(err)
	}
	did, c := nodeCLI(t, "", "keygen", "--out", filepath.Join(cdir, "carrier.key"))
	if c != 0 {
		t.Fatal("keygen")
	}
	did = strings.TrimSpace(did)
	grant, c := nodeCLI(t, "", "carrier", "add", did, "--relay", relayURL, "--dir", a)
	if c != 0 {
		t.Fatal("carrier add")
	}
	gf := filepath.Join(t.TempDir(), "grant.json")
	if err := os.WriteFile(gf, []byte(grant), 0o600); err != nil {
		t.Fatal(err)
	}

	carry, first, _ := startCarry(t, "--dir", cdir, "--grant", gf, "--store", "folder:"+cstore)
	if len(first.Relays) != 1 || first.Relays[0] != relayURL {
		t.Fatalf("the carrier's first line: %+v", first)
	}
	nodeA := startNode(t, a, "--relay", relayURL)
	eventually(t, 90*time.Second, "the first device never synced the private space with the carrier", func() bool {
		s, ok := carrierSession(t, a, did, priv)
		return ok && s.Phase == "live" && s.Sent > 0
	})
	// Written while the carrier is connected: pushed live.
	out, c = nodeCLI(t, `{"text":"`+secret+` during"}`, "put", priv, "app.entry", "--dir", a)
	if c != 0 {
		t.Fatal("put while serving")
	}
	during := jsonField(t, out, "key")
	// The first device stops once the carrier keeps what it wrote — in
	// the carrier's store, which it flushes every few seconds: a version
	// the first device counts as sent may still be on its way (or in the
	// carrier's admission) when it stops, and would then come only when
	// the two meet again.
	eventually(t, 60*time.Second, "the carrier's store never held both private records and the public one", func() bool {
		return storeHolds(t, cstore, before) && storeHolds(t, cstore, during) && storeHolds(t, cstore, public)
	})
	if code := stopWith(t, nodeA, syscall.SIGTERM); code != 143 {
		t.Fatalf("the first device: exit %d", code)
	}

	// The second device of the account: its key and nothing else, added
	// as the README says.
	if _, c = nodeCLI(t, "", "init", "--dir", b, "--account-key", filepath.Join(a, "account.key")); c != 0 {
		t.Fatal("init b")
	}
	readsAll := func() bool {
		for _, key := range []string{before, during} {
			out, _, code := minca(t, "", "get", priv, key, "--dir", b)
			var v struct{ Opened struct{ Body map[string]any } }
			if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
				return false
			}
			if text, _ := v.Opened.Body["text"].(string); !strings.HasPrefix(text, secret) {
				return false
			}
		}
		return true
	}
	nodeB := startNode(t, b, "--relay", relayURL)
	if !within(90*time.Second, readsAll) {
		out, _, _ := minca(t, "", "peers", "--dir", b)
		t.Errorf("the second device never read the private space from the carrier; its peers: %s", out)
		for _, key := range []string{before, during} {
			out, errs, code := minca(t, "", "get", priv, key, "--dir", b)
			t.Logf("get %s: exit %d %s %s", key, code, out, errs)
		}
		stopWith(t, nodeB, syscall.SIGTERM)
		stopWith(t, carry, syscall.SIGTERM)
		for who, url := range map[string]string{"the second device": "pebble:" + filepath.Join(b, "store"), "the carrier": "folder:" + cstore} {
			out, errs, _ := minca(t, "", "store", "export", "--store", url)
			var held []string
			for _, l := range strings.Split(out, "\n") {
				var v struct{ ID, Space, Collection, Key string }
				if json.Unmarshal([]byte(l), &v) == nil && v.Space == priv {
					held = append(held, v.Collection+" "+v.Key+" "+v.ID)
				}
			}
			t.Logf("%s holds of the private space:\n%s\n%s", who, strings.Join(held, "\n"), errs)
		}
		t.FailNow()
	}
	if code := stopWith(t, nodeB, syscall.SIGTERM); code != 143 {
		t.Fatalf("the second device: exit %d", code)
	}
	if code := stopWith(t, carry, syscall.SIGTERM); code != 143 {
		t.Fatalf("the carrier: exit %d", code)
	}
	if !storeHolds(t, cstore, public) {
		t.Fatal("the carrier's store holds not even the public space's text: the search finds nothing")
	}
	for _, d := range []string{cstore, cdir} {
		if storeHolds(t, d, secret) {
			t.Fatalf("the carrier's %s holds the private space's plaintext", d)
		}
	}
}

// storeHolds reports whether a file under dir holds marker, in its bytes or,
// for a mirror's segment, in the lines it decodes to.
func storeHolds(t *testing.T, dir, marker string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		texts := [][]byte{raw}
		if lines, err := mirror.DecodeSegment(raw); err == nil {
			texts = append(texts, lines...)
		}
		for _, x := range texts {
			found = found || bytes.Contains(x, []byte(marker))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// within reports whether cond holds within d, looking every 200 ms (each
// look may start processes).
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}
