//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/node/api"
	"github.com/minca-go/minca/transport"
)

// A node started with a file limit of 300 survives 2,000 kept-alive
// connections to each listener that each got one answer: the caps close
// what does not fit, the idle timeout closes what waits, and the node's
// own client and a peer are served after the flood.
func TestServeWithinAFileLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	t.Parallel()
	dir := t.TempDir()
	if _, errs, code := minca(t, "", "init", "--dir", dir); code != 0 {
		t.Fatalf("init: %s", errs)
	}
	bin := mincaOnPath(t)
	cmd := exec.Command("sh", "-c", "ulimit -n 300 && exec minca serve --dir '"+dir+"' --listen 127.0.0.1:0 --peer-listen 127.0.0.1:0 --limit api-idle=1s --limit peer-http-idle=1s")
	cmd.Env = append(readmeEnv(t), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	var ready struct{ URL, Peers string }
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.URL == "" || ready.Peers == "" {
		t.Fatalf("serve printed %q", line)
	}
	apiAddr := strings.TrimPrefix(ready.URL, "http://")
	peerAddr := strings.TrimSuffix(strings.TrimPrefix(ready.Peers, "ws://"), transport.PathPeer)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for _, target := range []struct{ addr, path string }{{apiAddr, "/v1/node"}, {peerAddr, transport.PathPeer}} {
		answered := 0
		for range 2000 {
			c, err := net.Dial("tcp", target.addr)
			if err != nil {
				continue
			}
			held = append(held, c)
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", target.path)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				resp.Body.Close()
				answered++
			}
		}
		t.Logf("%s: %d of 2000 kept-alive connections answered", target.path, answered)
	}
	tok, err := api.Token(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Once the idle timeouts (1 s) have closed what the flood left open,
	// the node's own client is answered, and a peer connects: each tried
	// until it is, for as long as a loaded machine takes to get there.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest("GET", ready.URL+"/v1/node", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's own client after the flood, for a minute: %v %v", resp, err)
		}
	}
	self := transport.Carrier(mustKey())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		c, err := transport.Dial(ctx, ready.Peers, &transport.Options{Self: self})
		cancel()
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a peer after the flood, for a minute: %v", err)
		}
	}
}

// docs/sync.md's Limits table names every --limit with its default, and
// the documentation names no bound the code lacks: every `--limit NAME`
// in docs/ and the README is a limit of serve, and every flag in the
// Limits tables' flag column is a flag of serve.
func TestLimitsTableInDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sync.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	limits := map[string]bool{}
	for _, d := range limitDefs(&nodeLimits{}) {
		limits[d.name] = true
	}
	for _, n := range docsNamingLimits(t) {
		for _, m := range regexp.MustCompile("--limit ([a-z][a-z0-9-]*)").FindAllStringSubmatch(n.text, -1) {
			if !limits[m[1]] {
				t.Errorf("%s names --limit %s, which serve does not have", n.path, m[1])
			}
		}
	}
	serveFlags := map[string]bool{}
	help, _, _ := minca(t, "", "serve", "--help")
	for _, m := range regexp.MustCompile("(?m)^  --([a-z][a-z0-9-]*)").FindAllStringSubmatch(help, -1) {
		serveFlags[m[1]] = true
	}
	if !serveFlags["limit"] {
		t.Fatalf("serve --help lists no --limit:\n%s", help)
	}
	_, limitsSection, _ := strings.Cut(doc, "\n## 10. Limits\n")
	limitsSection, _, _ = strings.Cut(limitsSection, "\n## ")
	rows := 0
	for _, row := range regexp.MustCompile(`(?m)^\|.*\|$`).FindAllString(limitsSection, -1) {
		cells := strings.Split(strings.Trim(row, "|"), "|")
		if len(cells) != 4 || strings.TrimSpace(cells[0]) == "bound" || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
			continue
		}
		rows++
		for _, m := range regexp.MustCompile("`--([a-z][a-z0-9-]*)").FindAllStringSubmatch(cells[2], -1) {
			if !serveFlags[m[1]] {
				t.Errorf("docs/sync.md §10 names --%s as the flag of %q, which serve does not have", m[1], strings.TrimSpace(cells[0]))
			}
		}
		// A default given as another bound's name (`peer-refuse-for`).
		for _, m := range regexp.MustCompile("`([a-z]+(?:-[a-z]+)+)`").FindAllStringSubmatch(cells[1], -1) {
			if !limits[m[1]] {
				t.Errorf("docs/sync.md §10 gives %q the default of %s, which is no limit of serve", strings.TrimSpace(cells[0]), m[1])
			}
		}
	}
	if rows < len(limits) {
		t.Fatalf("docs/sync.md §10: %d table rows found, fewer than the %d limits", rows, len(limits))
	}
	for _, d := range limitDefs(&nodeLimits{}) {
		row := regexp.MustCompile("(?m)^\\|[^\\n]*\\| `" + regexp.QuoteMeta(d.def) + "` \\| `--limit " + regexp.QuoteMeta(d.name) + "` \\|")
		if !row.MatchString(doc) {
			t.Errorf("docs/sync.md's Limits table has no row for --limit %s with default %s (%s)", d.name, d.def, d.what)
		}
		// The default written is one the flag takes.
		l := &nodeLimits{}
		fl := limitsFlag(l)
		if err := fl.Set(d.name + "=" + d.def); err != nil {
			t.Errorf("--limit %s=%s: %v", d.name, d.def, err)
		}
	}
}

// docText is one documentation file's text.
type docText struct{ path, text string }

// docsNamingLimits is every file of docs/ and the README.
func docsNamingLimits(t *testing.T) []docText {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	paths = append(paths, filepath.Join("..", "..", "README.md"))
	var out []docText
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docText{strings.TrimPrefix(filepath.ToSlash(p), "../../"), string(b)})
	}
	if len(out) < 5 {
		t.Fatalf("%d documentation files found", len(out))
	}
	return out
}
