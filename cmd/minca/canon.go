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
	fs := newFlags(s, "canon", "canon [--lines] < JSON\n\nPrints the canonical form (02 §1) of the JSON value on stdin and a newline;\nexit 1 when it is not valid JSON. With --lines, each input line is one value\nand each output line is its canonical form or \"error: <why>\"; exit 0.")
	lines := fs.Bool("lines", false, "treat each input line as one value")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("canon takes no arguments; it reads stdin")
	}
	if !*lines {
		data, err := io.ReadAll(io.LimitReader(s.in, maxLine+1))
		if err != nil {
			return usageError("reading stdin: %v", err)
		}
		if len(data) > maxLine {
			return failed(errors.New("input larger than 64 MiB"))
		}
		v, err := canonical.Parse(data)
		if err != nil {
			return failed(err)
		}
		out, err := canonical.Marshal(v)
		if err != nil {
			return failed(err)
		}
		_, err = s.out.Write(append(out, '\n'))
		return err
	}
	br := bufio.NewReaderSize(s.in, 1<<16)
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	for {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return usageError("reading stdin: %v", err)
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return nil
		}
		line = trimNewline(line)
		v, perr := canonical.Parse(line)
		var out []byte
		if perr == nil {
			out, perr = canonical.Marshal(v)
		}
		if perr != nil {
			w.WriteString("error: " + perr.Error() + "\n")
		} else {
			w.Write(append(out, '\n'))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
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
