//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/internal/race"
)

// person stands in for the person at the browser: `minca connect` opens
// the link with xdg-open, and this one does what the page does (hands the
// home the code from the fragment, waits for the program to ask, presses
// Allow) and then types the check the page shows into the terminal, the
// FIFO $PERSON that is the walkthrough's stdin.
const person = `#!/bin/sh
set -eu
link="$1"
origin="${link%%/connect*}"
code="${link#*#}"
id=$(curl -sf -X POST -H "Origin: $origin" --data-urlencode "code=$code" "$origin/connect/code" | jq -r .id)
while :; do
  v=$(curl -sf "$origin/connect/code/$id")
  [ "$(printf '%s' "$v" | jq -r .state)" = asked ] && break
  sleep 0.1
done
curl -sf -X POST -H "Origin: $origin" -d decision=allow "$origin/connect/code/$id" >/dev/null
printf '%s\n' "$(printf '%s' "$v" | jq -r .check)" > "$PERSON"
`

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	lang    string // the fence's language: sh, console, text, …
	section string // the last ## heading before it
	text    string
}

// docBlocks returns the fenced blocks of a Markdown file, in order.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	var cur *docBlock
	section := ""
	for _, l := range strings.SplitAfter(string(b), "\n") {
		trimmed := strings.TrimSpace(l)
		if cur != nil {
			if trimmed == "```" {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.text += strings.TrimPrefix(l, strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " "))))
			continue
		}
		if strings.HasPrefix(l, "## ") {
			section = strings.TrimSpace(strings.TrimPrefix(l, "## "))
		}
		if lang, ok := strings.CutPrefix(trimmed, "```"); ok {
			cur = &docBlock{lang: lang, section: section}
		}
	}
	if cur != nil {
		t.Fatalf("%s: a block that does not end", path)
	}
	return out
}

// transcript reads a console block: "$ " starts a command, which goes on
// over lines ending in "\" and through a here-document to its EOF line;
// the lines after a command, up to the next, are what it prints.
func transcript(t *testing.T, text string) []transcriptStep {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var steps []transcriptStep
	for k := 0; k < len(lines); k++ {
		l := lines[k]
		if !strings.HasPrefix(l, "$ ") {
			if len(steps) == 0 {
				t.Fatalf("output before the first command: %q", l)
			}
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
			continue
		}
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, "\\") && k+1 < len(lines) {
			k++
			cmd += "\n" + lines[k]
		}
		if strings.Contains(cmd, "<<EOF") || strings.Contains(cmd, "<<'EOF'") {
			for k+1 < len(lines) {
				k++
				cmd += "\n" + lines[k]
				if lines[k] == "EOF" {
					break
				}
			}
		}
		steps = append(steps, transcriptStep{cmd: cmd})
	}
	return steps
}

// The README, run as a new user would: every sh and console block in the
// order written, in one shell, from an empty home directory (no
// configuration, no MINCA_ settings, this build as `minca` on PATH), with
// `minca serve` started where the Quick start starts it (in the
// background, on a free port: MINCA_LISTEN, the one setting given). Only
// the Install section's blocks are not run: they build and test this
// repository. Each console block's commands print what it shows (JSON
// lines compared member by member, "…" standing for what differs each
// run), and every JSON line any `minca` in any block prints is checked
// against the shape docs/cli.md documents for its verb ("What each verb
// prints"): a verb whose output changed shape, or that prints a Go value's
// fields, fails here.
func TestReadmeRunsInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	// The README's fixed ports (1747x, 1748x) are outside the ephemeral
	// range the other tests' listeners take, and no other test runs it.
	t.Parallel()
	requireTools(t, "bash", "jq", "curl", "timeout")
	blocks := docBlocks(t, readmePath)
	home := t.TempDir()
	calls := t.TempDir()
	bin := mincaOnPath(t)
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(person), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "terminal")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: opening does not wait for a writer, and the
	// terminal never ends while the README runs.
	terminal, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer terminal.Close()

	const marker = "@@minca-readme "
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	type console struct {
		block int
		steps []transcriptStep
	}
	var consoles []console
	ran, served := 0, false
	for i, b := range blocks {
		if b.section == "Install" || (b.lang != "sh" && b.lang != "console") {
			continue
		}
		ran++
		fmt.Fprintf(&script, "echo '%sblock %d'\n", marker, i)
		switch {
		case b.lang == "console":
			steps := transcript(t, b.text)
			for k, s := range steps {
				// A step exits 0, unless the README shows "(exit N)" last.
				want := 0
				if n := len(s.want); n > 0 {
					if m := exitShown.FindStringSubmatch(s.want[n-1]); m != nil {
						want, _ = strconv.Atoi(m[1])
						steps[k].want = s.want[:n-1]
					}
				}
				fmt.Fprintf(&script, "echo '%sstep %d %d'\nset +e\n%s\nrc=$?\nset -e\necho \"%sexit $rc\"\n"+
					"[ $rc = %d ] || { echo 'the README shows exit %d' >&2; exit 1; }\n", marker, i, k, s.cmd, marker, want, want)
			}
			consoles = append(consoles, console{i, steps})
		case strings.TrimSpace(b.text) == "minca serve":
			// The Quick start: the node runs from here on.
			script.WriteString("minca serve > \"$READMETEST/serve.json\" 2> \"$READMETEST/serve.log\" & SERVE=$!\n" +
				"until [ -s \"$READMETEST/serve.json\" ]; do kill -0 $SERVE; sleep 0.1; done\n")
			served = true
		default:
			script.WriteString(b.text)
		}
	}
	if !served {
		t.Fatal("the README starts no `minca serve` of its own")
	}
	if ran < 8 {
		t.Fatalf("the README has %d blocks to run", ran)
	}
	script.WriteString("kill $SERVE; wait $SERVE || true\n")

	ctx, cancel := context.WithTimeout(context.Background(), readmeLimit(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = home
	cmd.Stdin = terminal
	// Everything it starts is in its process group: stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(k, "MINCA_"), strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "AWS_"), k == "PATH", k == "HOME":
			continue
		}
		env = append(env, e)
	}
	readmetest := t.TempDir()
	cmd.Env = append(env, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MINCA_LISTEN=127.0.0.1:0", recordCalls+"="+calls, "PERSON="+fifo, "READMETEST="+readmetest)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A `minca serve` that stops on its own (its port in use, a bad flag)
	// would leave the script waiting for its first line until the limit:
	// the script is ended at once instead, and the serve named.
	watched := make(chan struct{})
	var serveStopped string
	go func() {
		defer close(watched)
		serveStopped = watchServes(ctx, calls, cancel)
	}()
	err = cmd.Wait()
	cancel()
	<-watched
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever a failed block left running
	out := stdout.String()
	if serveStopped != "" {
		t.Fatalf("the README stopped at %s: %s\nstdout (end):\n%s\nstderr (end):\n%s",
			lastMarker(out, marker), serveStopped, tail(out, 3000), tail(stderr.String(), 3000))
	}
	if err != nil {
		serveLog, _ := os.ReadFile(filepath.Join(readmetest, "serve.log"))
		t.Fatalf("the README stopped at %s: %v\nstdout (end):\n%s\nstderr (end):\n%s\nminca serve said:\n%s",
			lastMarker(out, marker), err, tail(out, 3000), tail(stderr.String(), 3000), tail(string(serveLog), 2000))
	}

	// Each console step printed what the README shows.
	for _, c := range consoles {
		for k, s := range c.steps {
			got := stepOutput(out, marker, fmt.Sprintf("step %d %d", c.block, k))
			if len(got) != len(s.want) {
				t.Errorf("$ %s\nprinted %d lines, the README shows %d:\n%s", s.cmd, len(got), len(s.want), strings.Join(got, "\n"))
				continue
			}
			for j, w := range s.want {
				if !lineMatches(w, got[j]) {
					t.Errorf("$ %s\nprinted  %s\nREADME:  %s", s.cmd, got[j], w)
				}
			}
		}
	}
	checkCalls(t, calls, "README.md")
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("errors on stderr:\n%s", stderr.String())
	}
}

// watchServes looks at the calls a documentation script makes (recorded in
// dir, recordCalls) until ctx ends, for a `minca serve` or `minca home`
// (what a script starts in the background and waits on) that exited other
// than by the signal that stops it (130, 143). At the first it calls stop
// and returns what it said; else it returns "".
func watchServes(ctx context.Context, dir string, stop func()) string {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	seen := map[string]bool{}
	for {
		codes, _ := filepath.Glob(filepath.Join(dir, "call-*.code"))
		for _, c := range codes {
			if seen[c] {
				continue
			}
			seen[c] = true
			base := strings.TrimSuffix(c, ".code")
			var argv []string
			if b, err := os.ReadFile(base + ".args"); err != nil || json.Unmarshal(b, &argv) != nil {
				continue
			}
			if v := calledVerb(argv); v != "serve" && v != "home" {
				continue
			}
			b, _ := os.ReadFile(c)
			code, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				delete(seen, c) // not a whole code (yet): read it again
				continue
			}
			if code == exitSIGINT || code == exitSIGTERM || slices.Contains(argv, "--help") {
				continue
			}
			stop()
			errs, _ := os.ReadFile(base + ".err")
			return fmt.Sprintf("minca %s exited %d while the script ran; it said:\n%s",
				strings.Join(argv, " "), code, tail(string(errs), 2000))
		}
		select {
		case <-ctx.Done():
			return ""
		case <-tick.C:
		}
	}
}

// exitShown is how a console block shows a command's exit code when it is
// not 0: "(exit 1)", last after what it printed.
var exitShown = regexp.MustCompile(`^\(exit (\d+)\)$`)

// requireTools skips a test when a tool its documentation runs is missing,
// except under CI (MINCA_REQUIRE_DOC_TOOLS=1), where a missing tool fails
// it: CI installs them, so a skip there would make CI thinner unseen.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("MINCA_REQUIRE_DOC_TOOLS") == "1" {
				t.Fatalf("%s is not installed, and MINCA_REQUIRE_DOC_TOOLS=1 (CI) says the documentation tests run", tool)
			}
			t.Skip(tool + " is not installed")
		}
	}
}

// stepOutput is what a marked step printed: the lines after its marker,
// up to the next marker.
func stepOutput(out, marker, name string) []string {
	_, rest, ok := strings.Cut(out, marker+name+"\n")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, marker); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSuffix(rest, "\n")
	if rest == "" {
		return nil
	}
	return strings.Split(rest, "\n")
}

func lastMarker(out, marker string) string {
	i := strings.LastIndex(out, marker)
	if i < 0 {
		return "the start"
	}
	l, _, _ := strings.Cut(out[i+len(marker):], "\n")
	return l
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// readmeLimit is how long the README's script may run before it is taken
// for hung: 4 minutes; 15 under -race, where every minca it runs is
// race-built and several times slower; never past the test binary's own
// -timeout, less the time to report what the script printed.
func readmeLimit(t *testing.T) time.Duration {
	limit := 4 * time.Minute
	if race.Enabled {
		limit = 15 * time.Minute
	}
	if dl, ok := t.Deadline(); ok {
		limit = min(limit, time.Until(dl)-30*time.Second)
	}
	return limit
}
