//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// updateScreenshot, set to 1, makes TestHomePageInChromium write its
// screenshot of the connect page to docs/home-connect.png too.
const updateScreenshot = "MINCA_UPDATE_SCREENSHOT"

// The connect page in a real browser (Debian's chromium, headless): the
// page reads the code from its address, shows the program's name, what it
// asks and the check, and its Allow button grants; the check typed in
// `minca connect` then keeps the note, and the page says so. Screenshots
// of the page are kept as the test's artefacts (go test -artifacts).
func TestHomePageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("MINCA_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is not installed and MINCA_REQUIRE_CHROMIUM is set (.ci/run installs Debian's)")
		}
		t.Skip("chromium is not installed (.ci/run installs Debian's)")
	}
	h := startHome(t, t.TempDir())
	prog := t.TempDir()
	c := startConnect(t, h.URL, prog)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openChromium(t, ctx, browser, c.Link)
	shown := tab.waitFor(t, ctx, `(() => { const b = document.getElementById('allow'); return b ? JSON.stringify({check: document.getElementById('check').textContent, program: document.getElementById('program').textContent, text: document.body.innerText, address: location.href}) : ''; })()`)
	var asked struct{ Check, Program, Text, Address string }
	if err := json.Unmarshal([]byte(shown), &asked); err != nil {
		t.Fatal(err)
	}
	check := strings.ReplaceAll(asked.Check, " ", "")
	if asked.Program != "agent" || len(check) != 6 || !strings.Contains(asked.Text, "records") || !strings.Contains(asked.Text, "Deny") {
		t.Fatalf("the page shows %+v", asked)
	}
	if strings.Contains(asked.Address, "mc_") {
		t.Fatalf("the code stayed in the address bar: %s", asked.Address)
	}
	shot := tab.screenshot(t, ctx)
	keep(t, "home-connect.png", shot)
	docShot := filepath.Join("..", "..", "docs", "home-connect.png")
	if os.Getenv(updateScreenshot) == "1" {
		if err := os.WriteFile(docShot, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The page looks as docs/home-connect.png shows it: the same size, and
	// the same but for the check and the few pixels a renderer's version
	// may shade otherwise.
	if diff, err := lookApart(docShot, shot); err != nil {
		t.Fatal(err)
	} else if diff > maxLookApart {
		t.Errorf("the connect page differs from docs/home-connect.png in %.1f%% of its pixels (at most %.1f%%): see the test's artefacts; %s=1 writes the new look", 100*diff, 100*maxLookApart, updateScreenshot)
	} else {
		t.Logf("the connect page differs from docs/home-connect.png in %.2f%% of its pixels", 100*diff)
	}

	tab.eval(t, ctx, `document.getElementById('allow').click(), ''`)
	allowed := tab.waitFor(t, ctx, `(() => { const h = document.querySelector('h1'); return h && h.textContent === 'Allowed' ? document.getElementById('check').textContent : ''; })()`)
	if strings.ReplaceAll(allowed, " ", "") != check {
		t.Fatalf("after Allow the page shows the check %q, not %q", allowed, asked.Check)
	}
	fmt.Fprintln(c.stdin, check)
	if code, out := c.wait(t); code != 0 || !strings.Contains(out, h.Account) {
		t.Fatalf("connect: exit %d, %q; stderr:\n%s", code, out, c.stderr)
	}
	tab.waitFor(t, ctx, `document.getElementById('done') ? 'yes' : ''`)
	keep(t, "home-connected.png", tab.screenshot(t, ctx))
	if _, err := os.Stat(filepath.Join(prog, "session.note")); err != nil {
		t.Fatal(err)
	}
}

// keep writes an artefact of the test.
func keep(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tab is one page of a headless Chromium, driven over the DevTools
// protocol's WebSocket.
type tab struct {
	c    *websocket.Conn
	next int
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://[^\s]+)`)

// openChromium starts a headless Chromium with a fresh profile on link and
// returns its page.
func openChromium(t *testing.T, ctx context.Context, browser, link string) *tab {
	t.Helper()
	// The profile is not t.TempDir: Chromium's helpers can still be
	// writing to it as the test ends, and a directory that will not go is
	// no failure of the page. The whole process group is stopped first.
	profile, err := os.MkdirTemp("", "minca-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+profile, "--remote-debugging-port=0", "--window-size=720,1000", link)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-ctx.Done():
		t.Fatal("chromium did not say where DevTools listen")
	}
	host := strings.TrimPrefix(browserWS, "ws://")
	host = host[:strings.Index(host, "/")]
	var pageWS string
	for pageWS == "" {
		res, err := http.Get("http://" + host + "/json/list")
		if err == nil {
			var targets []struct{ Type, URL, WebSocketDebuggerURL string }
			json.NewDecoder(res.Body).Decode(&targets)
			res.Body.Close()
			for _, tg := range targets {
				if tg.Type == "page" {
					pageWS = tg.WebSocketDebuggerURL
				}
			}
		}
		if pageWS == "" {
			select {
			case <-ctx.Done():
				t.Fatal("chromium opened no page")
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	c, _, err := websocket.Dial(ctx, pageWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &tab{c: c}
}

// call sends one DevTools command and returns its result, skipping the
// events that come between.
func (b *tab) call(t *testing.T, ctx context.Context, method string, params any) json.RawMessage {
	t.Helper()
	res, refused := b.try(t, ctx, method, params)
	if refused != "" {
		t.Fatalf("%s: %s", method, refused)
	}
	return res
}

// try is call, returning the browser's refusal of the command instead of
// failing the test on it.
func (b *tab) try(t *testing.T, ctx context.Context, method string, params any) (result json.RawMessage, refused string) {
	t.Helper()
	b.next++
	msg, _ := json.Marshal(map[string]any{"id": b.next, "method": method, "params": params})
	if err := b.c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := b.c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var r struct {
			ID     int
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if json.Unmarshal(data, &r) != nil || r.ID != b.next {
			continue
		}
		if r.Error != nil {
			return nil, r.Error.Message
		}
		return r.Result, ""
	}
}

// eval evaluates a JavaScript expression that yields a string.
func (b *tab) eval(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, refused := b.tryEval(t, ctx, expr)
	if refused != "" {
		t.Fatalf("Runtime.evaluate: %s", refused)
	}
	return s
}

// tryEval is eval, returning the browser's refusal instead of failing.
func (b *tab) tryEval(t *testing.T, ctx context.Context, expr string) (string, string) {
	t.Helper()
	res, refused := b.try(t, ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var r struct {
		Result struct{ Value any }
	}
	json.Unmarshal(res, &r)
	s, _ := r.Result.Value.(string)
	return s, refused
}

// overtaken reports whether DevTools refused an evaluation because a
// navigation of the page overtook it.
func overtaken(refused string) bool {
	return strings.Contains(refused, "Inspected target navigated or closed") || strings.Contains(refused, "Execution context was destroyed")
}

// waitFor evaluates expr until it yields a non-empty string. An
// evaluation the page's own navigation overtook (the page loads the link,
// then takes the code out of its address) is asked again of the page
// that comes next.
func (b *tab) waitFor(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	for {
		s, refused := b.tryEval(t, ctx, expr)
		if refused != "" && !overtaken(refused) {
			t.Fatalf("Runtime.evaluate: %s", refused)
		}
		if s != "" {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the page never showed %s; it shows:\n%s", expr, b.eval(t, context.Background(), "document.body ? document.body.innerText : ''"))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// screenshot is the page as PNG.
func (b *tab) screenshot(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	var r struct{ Data string }
	json.Unmarshal(b.call(t, ctx, "Page.captureScreenshot", map[string]any{"format": "png"}), &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil || len(png) < 1000 {
		t.Fatalf("a screenshot of %d bytes: %v", len(png), err)
	}
	return png
}

// maxLookApart is the share of pixels a screenshot of the connect page may
// differ in from the document's: the check's six digits are new each
// time, and fonts may be shaded a little otherwise.
const maxLookApart = 0.03

// lookApart compares the PNG at path with the PNG got: the share of
// pixels whose colour differs by more than a shade, or an error when the
// two are not the same size.
func lookApart(path string, got []byte) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	a, err := png.Decode(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	b, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		return 0, fmt.Errorf("the screenshot: %w", err)
	}
	if a.Bounds() != b.Bounds() {
		return 0, fmt.Errorf("the screenshot is %v, %s is %v", b.Bounds().Size(), path, a.Bounds().Size())
	}
	const shade = 24 << 8 // of 0xffff, per channel
	far := func(x, y uint32) bool { return x > y+shade || y > x+shade }
	r := a.Bounds()
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) {
				n++
			}
		}
	}
	return float64(n) / float64(r.Dx()*r.Dy()), nil
}
