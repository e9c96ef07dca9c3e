package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const readmePath = "../../README.md"

// transcriptStep is one command of a README transcript and what it prints.
type transcriptStep struct {
	cmd  string   // shell text, continuation lines and a here-document included
	want []string // output lines; "…" matches anything within a line
}

// readTranscript returns the steps of the first ```console block after
// heading in a Markdown file: "$ " starts a command, which goes on over
// lines ending in "\" and through a here-document to its EOF line; the
// lines after a command, up to the next, are its output.
func readTranscript(t *testing.T, path, heading string) []transcriptStep {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	text = text[i:]
	start := strings.Index(text, "```console\n")
	if start < 0 {
		t.Fatalf("no console block after %q", heading)
	}
	text = text[start+len("```console\n"):]
	end := strings.Index(text, "```")
	if end < 0 {
		t.Fatal("the console block does not end")
	}
	lines := strings.Split(strings.TrimSuffix(text[:end], "\n"), "\n")
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

// linePattern turns an expected output line into a regexp: "…" matches
// any run of characters, the rest matches itself.
func linePattern(want string) *regexp.Regexp {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// The README's first-record walkthrough, run word for word by bash in an
// empty directory with this build as `minca`: every command succeeds and
// prints what the README shows.
func TestReadmeWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the README's shell commands")
	}
	steps := readTranscript(t, readmePath, "## Your first record")
	if len(steps) < 8 {
		t.Fatalf("the walkthrough has %d commands", len(steps))
	}
	for _, verb := range []string{"minca keygen", "minca key fresh", "minca sign", "minca store import", "minca store get", "minca store history"} {
		found := false
		for _, s := range steps {
			found = found || strings.Contains(s.cmd, verb)
		}
		if !found {
			t.Errorf("the walkthrough never runs %s", verb)
		}
	}
	const marker = "@@minca-readme-step "
	var script strings.Builder
	script.WriteString("set -e -o pipefail\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "echo '%s%d'\n%s\n", marker, i, s.cmd)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MINCA_") && !strings.HasPrefix(e, "PATH=") && !strings.HasPrefix(e, "XDG_CACHE_HOME=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "PATH="+mincaOnPath(t)+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_CACHE_HOME="+filepath.Join(dir, ".cache"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	outs := strings.Split(stdout.String(), marker)[1:]
	if err != nil {
		t.Fatalf("the walkthrough failed at step %d (%q): %v\nstderr:\n%s", len(outs)-1, steps[max(len(outs)-1, 0)].cmd, err, stderr.String())
	}
	if len(outs) != len(steps) {
		t.Fatalf("%d of %d steps ran", len(outs), len(steps))
	}
	for i, s := range steps {
		out := outs[i]
		out = out[strings.Index(out, "\n")+1:] // past the step number
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		if len(got) != len(s.want) {
			t.Errorf("$ %s\nprinted %d lines, the README shows %d:\n%s", s.cmd, len(got), len(s.want), out)
			continue
		}
		for k, w := range s.want {
			if !linePattern(w).MatchString(got[k]) {
				t.Errorf("$ %s\nprinted  %s\nREADME:  %s", s.cmd, got[k], w)
			}
		}
	}
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("errors on stderr:\n%s", stderr.String())
	}
}

// Every relative link in the README and docs/ names a file in the
// repository: nothing points outside a clone.
func TestDocLinks(t *testing.T) {
	files := []string{readmePath}
	docs, _ := filepath.Glob("../../docs/*.md")
	files = append(files, docs...)
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("../shared")) || bytes.Contains(b, []byte("shared/research")) {
			t.Errorf("%s points outside the repository (shared/)", f)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p := filepath.Join(filepath.Dir(f), target)
			abs, _ := filepath.Abs(p)
			root, _ := filepath.Abs("../..")
			if !strings.HasPrefix(abs, root+string(filepath.Separator)) {
				t.Errorf("%s: link %s leaves the repository", f, target)
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %s: %v", f, target, err)
			}
		}
	}
	if _, err := os.Stat("../../LICENSE"); err != nil {
		t.Error("no LICENSE")
	}
}

// The README lists every verb and subverb with an example, the exit codes,
// MINCA_STORE, how to install, which verbs create a store, the S3 URL's
// parameters, and every flag of the verbs that open stores.
func TestReadmeListsEveryVerb(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	names := []string{}
	for _, v := range verbs() {
		names = append(names, v.name)
	}
	for _, v := range verbs() {
		verb := v.name
		for _, s := range subverbsOf(verb) {
			names = append(names, verb+" "+s.name)
		}
	}
	for _, n := range names {
		if !regexp.MustCompile("minca " + regexp.QuoteMeta(n) + "([ `\n]|$)").MatchString(text) {
			t.Errorf("the README has no example of minca %s", n)
		}
	}
	for _, s := range []string{
		"go install github.com/minca-go/minca/cmd/minca@latest",
		"MINCA_STORE", "--log-format json",
		"| 0 | ok |", "| 1 | a check failed", "| 2 | bad usage or unreadable input |", "| 3 | not found", "| 4 | unreachable", "130, 143",
		"sqlite:FILE", "timeout=", "connect-timeout=", "Only verbs that write make a store", "[LICENSE](LICENSE)",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the README does not say %q", s)
		}
	}
	// Every flag of the verbs that open stores and blob stores is there.
	for _, v := range [][]string{{"mirror"}, {"backup"}, {"restore"}, {"compact"}, {"bench", "mirror"},
		{"store", "import"}, {"store", "get"}, {"store", "history"}, {"store", "export"}, {"store", "stats"}, {"store", "check"}, {"serve"}, {"space", "join"}} {
		help, _, _ := minca(t, "", append(v, "--help")...)
		for _, l := range strings.Split(help, "\n") {
			if !strings.HasPrefix(l, "  --") {
				continue
			}
			flag := strings.Fields(l)[0]
			if !regexp.MustCompile(regexp.QuoteMeta(flag) + "[ `=]").MatchString(text) {
				t.Errorf("the README does not document %s of minca %s", flag, strings.Join(v, " "))
			}
		}
	}
}
