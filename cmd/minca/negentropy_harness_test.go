package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestNegentropyHarnessVerb(t *testing.T) {
	t.Parallel()
	ee := strings.Repeat("e", 64)
	var out, errb bytes.Buffer
	s := &stdio{in: strings.NewReader("item,12345," + ee + "\nseal\nmsg,62aabb\nmsg,6100000200\n"), out: &out, err: &errb}
	if code := run(context.Background(), []string{"negentropy-harness", "--storage", "tree"}, s); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "msg,61\nmsg,6100000201" + ee + "\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	s = &stdio{in: strings.NewReader(""), out: &out, err: &errb}
	if code := run(context.Background(), []string{"negentropy-harness", "--frame-size-limit", "100"}, s); code != exitFailed {
		t.Fatalf("limit 100: exit %d", code)
	}
	if code := run(context.Background(), []string{"negentropy-harness", "--help"}, s); code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
}
