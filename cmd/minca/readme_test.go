package main

import (
	"bytes"
	"os"
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

// linePattern turns an expected output line into a regexp: "…" matches
// any run of characters, the rest matches itself.
func linePattern(want string) *regexp.Regexp {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
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
