package main

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/minca-go/minca/canonical"
)

// runCanon prints the canonical form of JSON (02 §1).
func runCanon(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "canon", "canon [--lines] [FILE]\n\nPrints the canonical form (02 §1) of the JSON value in FILE or on stdin and a\nnewline; exit 2 when it is not valid JSON. With --lines, each input line is\none value and each output line is its canonical form or \"error: <why>\";\nexit 2 when any line is not valid JSON.")
	lines := fs.Bool("lines", false, "treat each input line as one value")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("canon takes at most one FILE")
	}
	if !*lines {
		data, err := readAll(s, fs.Arg(0))
		if err != nil {
			return err
		}
		v, err := canonical.Parse(data)
		if err != nil {
			return usageError("%v", err)
		}
		out, err := canonical.Marshal(v)
		if err != nil {
			return usageError("%v", err)
		}
		_, err = s.out.Write(append(out, '\n'))
		return err
	}
	in, err := openInput(s, fs.Arg(0))
	if err != nil {
		return err
	}
	defer in.close()
	lr := newLineReader(in.r)
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	bad := 0
	for {
		line, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return usageError("reading %s: %v", in.label(), err)
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		line = trimNewline(line)
		v, perr := canonical.Parse(line)
		var out []byte
		if perr == nil {
			out, perr = canonical.Marshal(v)
		}
		if perr != nil {
			bad++
			w.WriteString("error: " + perr.Error() + "\n")
		} else {
			w.Write(append(out, '\n'))
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if bad > 0 {
		return quiet(exitUsage)
	}
	return nil
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
