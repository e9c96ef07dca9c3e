package harness_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/minca-go/minca/negentropy/harness"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

func runLines(t *testing.T, in string, opts harness.Options) (string, error) {
	t.Helper()
	var out strings.Builder
	err := harness.Run(context.Background(), strings.NewReader(in), &out, opts)
	return out.String(), err
}

const ee = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

// TestProtocolUpgrade is the reference's protoversion.pl: a server answers
// an unknown version with 61, then a V1 message as usual.
func TestProtocolUpgrade(t *testing.T) {
	for _, st := range []harness.Storage{harness.StorageVector, harness.StorageTree} {
		out, err := runLines(t, "item,12345,"+ee+"\nseal\nmsg,62aabbccddeeff\nmsg,6100000200\n", harness.Options{Storage: st})
		if err != nil {
			t.Fatal(err)
		}
		want := "msg,61\nmsg,6100000201" + ee + "\n"
		if out != want {
			t.Fatalf("%s: got %q, want %q", st, out, want)
		}
	}
}

func TestBadLines(t *testing.T) {
	for _, in := range []string{
		"bogus\n",
		"item,1\n",
		"item,x," + ee + "\n",
		"item,1,zz\n",
		"item,1," + ee + "\nitem,1," + ee + "\nseal\n",
		"seal\nseal\n",
		"initiate\n",
		"seal\nmsg,zz\n",
		"seal\nmsg,\n",
		"seal\nmsg,6100\n",
	} {
		if out, err := runLines(t, in, harness.Options{}); err == nil {
			t.Errorf("%q: no error, output %q", in, out)
		}
	}
	if _, err := runLines(t, "", harness.Options{FrameSizeLimit: 100}); err == nil {
		t.Error("frame size limit 100 accepted")
	}
}

// TestPair runs a client harness against a server harness through pipes, as
// the reference fuzz.pl does, and checks have/need and the line counts.
func TestPair(t *testing.T) {
	for _, lim := range []uint64{0, 4096} {
		for _, st := range []harness.Storage{harness.StorageVector, harness.StorageTree} {
			t.Run(fmt.Sprintf("%s/limit%d", st, lim), func(t *testing.T) { pair(t, lim, st) })
		}
	}
}

func pair(t *testing.T, lim uint64, st harness.Storage) {
	a, b := gen.Pair(gen.Spec{N: 5000, OnlyA: 0.05, OnlyB: 0.05, Timestamps: gen.Clustered, Seed: 5})
	ctx := context.Background()
	cIn, cInW := io.Pipe()
	cOutR, cOut := io.Pipe()
	sIn, sInW := io.Pipe()
	sOutR, sOut := io.Pipe()
	errc := make(chan error, 2)
	go func() {
		errc <- harness.Run(ctx, cIn, cOut, harness.Options{FrameSizeLimit: lim, Storage: st})
		cOut.Close()
	}()
	go func() {
		errc <- harness.Run(ctx, sIn, sOut, harness.Options{FrameSizeLimit: lim, Storage: st})
		sOut.Close()
	}()
	go func() {
		for _, it := range a {
			fmt.Fprintf(cInW, "item,%d,%x\n", it.Timestamp, it.ID[:])
		}
		fmt.Fprintln(cInW, "seal")
		fmt.Fprintln(cInW, "initiate")
	}()
	for _, it := range b {
		fmt.Fprintf(sInW, "item,%d,%x\n", it.Timestamp, it.ID[:])
	}
	fmt.Fprintln(sInW, "seal")
	cr, sr := bufio.NewScanner(cOutR), bufio.NewScanner(sOutR)
	cr.Buffer(nil, 1<<24)
	sr.Buffer(nil, 1<<24)
	have, need := map[string]bool{}, map[string]bool{}
	rounds := 0
	for cr.Scan() {
		line := cr.Text()
		kind, rest, _ := strings.Cut(line, ",")
		switch kind {
		case "have":
			have[rest] = true
			continue
		case "need":
			need[rest] = true
			continue
		case "done":
		case "msg":
			rounds++
			fmt.Fprintln(sInW, line)
			if !sr.Scan() || !strings.HasPrefix(sr.Text(), "msg,") {
				t.Fatalf("server gave %q", sr.Text())
			}
			fmt.Fprintln(cInW, sr.Text())
			continue
		default:
			t.Fatalf("client printed %q", line)
		}
		break
	}
	cInW.Close()
	sInW.Close()
	for range 2 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if sr.Scan() {
		t.Fatalf("server printed extra line %q", sr.Text())
	}
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, it := range a {
		inA[fmt.Sprintf("%x", it.ID[:])] = true
	}
	for _, it := range b {
		inB[fmt.Sprintf("%x", it.ID[:])] = true
	}
	for id := range inA {
		if !inB[id] != have[id] {
			t.Fatalf("have wrong for %s", id)
		}
	}
	for id := range inB {
		if !inA[id] != need[id] {
			t.Fatalf("need wrong for %s", id)
		}
	}
	if len(have)+len(need) == 0 || rounds < 2 {
		t.Fatalf("too easy: %d have, %d need, %d rounds", len(have), len(need), rounds)
	}
}
