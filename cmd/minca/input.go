package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/minca-go/minca/canonical"
)

// maxLine bounds one JSON line read from input: 64 MiB, far above any
// version, so a runaway line is an error rather than memory exhaustion.
const maxLine = 64 << 20

// lineReader reads input line by line, counting lines (from 1) so that
// what is said about a line can name it.
type lineReader struct {
	br *bufio.Reader
	n  int // the number of the last line read
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next line with its newline, and io.EOF with the last
// one (possibly empty).
func (lr *lineReader) next() ([]byte, error) {
	var out []byte
	for {
		chunk, err := lr.br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, fmt.Errorf("line %d is longer than %d bytes", lr.n+1, maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(out) > 0 {
			lr.n++
		}
		return out, err
	}
}

// countRest counts the non-blank lines not read yet: how many values are
// left, when input stops early.
func (lr *lineReader) countRest() (int, error) {
	n := 0
	for {
		line, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
		if err != nil {
			return n, nil
		}
	}
}

// readValues reads JSON from r as the verbs that take versions do: one JSON
// value, or JSON lines (one value per non-blank line). It calls fn for each
// value in order, with the value's raw bytes, or with the error that
// refused it; an error from fn stops reading.
func readValues(r io.Reader, fn func(raw []byte, v any, err error) error) error {
	return readLines(newLineReader(r), func(_ int, raw []byte, v any, err error) error { return fn(raw, v, err) })
}

// readLines is readValues with each value's line number (its first line,
// counting from 1 and blank lines included, so `sed -n Np` shows it).
//
// The two forms are told apart by the first non-blank line: if it is a JSON
// value on its own, the input is JSON lines; otherwise the whole input is
// one value (pretty-printed, say).
func readLines(lr *lineReader, fn func(line int, raw []byte, v any, err error) error) error {
	var first []byte
	for {
		line, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			first = line
			break
		}
		if errors.Is(err, io.EOF) {
			return nil // empty input: no values
		}
	}
	start := lr.n
	if v, err := canonical.Parse(first); err == nil {
		if err := fn(start, first, v, nil); err != nil {
			return err
		}
		for {
			line, err := lr.next()
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if len(bytes.TrimSpace(line)) > 0 {
				v, perr := canonical.Parse(line)
				if ferr := fn(lr.n, line, v, perr); ferr != nil {
					return ferr
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
		}
	}
	rest, err := io.ReadAll(io.LimitReader(lr.br, maxLine))
	if err != nil {
		return err
	}
	all := append(first, rest...)
	v, perr := canonical.Parse(all)
	return fn(start, all, v, perr)
}

// input is one source a verb reads: a file named on the command line, or
// stdin.
type input struct {
	name string // the path, or "-" for stdin
	r    io.Reader
	// size is the bytes to read when known (a regular file, stdin
	// redirected from one), for progress; else -1.
	size int64
	// regular reports a regular file: reading it to the end never waits
	// on a writer.
	regular bool
	close   func()
}

// openInput opens a FILE argument; "" and "-" are stdin. A file that
// cannot be opened is bad input: exit 2.
func openInput(s *stdio, path string) (*input, error) {
	if path == "" || path == "-" {
		in := &input{name: "-", r: s.in, size: -1, close: func() {}}
		if f, ok := s.in.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				in.size, in.regular = fi.Size(), true
			}
		}
		return in, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError("%v", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, usageError("%v", err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, usageError("%s is a directory", path)
	}
	in := &input{name: path, r: f, size: -1, regular: fi.Mode().IsRegular(), close: func() { f.Close() }}
	if in.regular {
		in.size = fi.Size()
	}
	return in, nil
}

// eachInput calls fn with each FILE argument in turn, or with stdin when
// there is none.
func eachInput(s *stdio, paths []string, fn func(in *input) error) error {
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	for _, p := range paths {
		in, err := openInput(s, p)
		if err != nil {
			return err
		}
		err = fn(in)
		in.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readAll reads one input whole, bounded by maxLine: a larger one is bad
// input.
func readAll(s *stdio, path string) ([]byte, error) {
	in, err := openInput(s, path)
	if err != nil {
		return nil, err
	}
	defer in.close()
	data, err := io.ReadAll(io.LimitReader(in.r, maxLine+1))
	if err != nil {
		return nil, usageError("reading %s: %v", in.label(), err)
	}
	if len(data) > maxLine {
		return nil, usageError("%s is larger than %d bytes", in.label(), maxLine)
	}
	return data, nil
}

// label names the input in messages.
func (in *input) label() string {
	if in.name == "-" {
		return "stdin"
	}
	return in.name
}

// writeJSONLine writes v's canonical form and a newline.
func writeJSONLine(w io.Writer, v any) error {
	b, err := canonical.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// writeJSON writes a Go value as one line of JSON (encoding/json: for
// results and reports, not for anything hashed), its nil lists and maps
// as [] and {} (docs/cli.md).
func writeJSON(s *stdio, v any) error {
	return json.NewEncoder(s.out).Encode(emptyLists(v))
}
