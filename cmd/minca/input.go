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

// readValues reads JSON from r as the verbs that take versions do: one JSON
// value, or JSON lines (one value per non-blank line). It calls fn for each
// value in order, with the value's raw bytes, or with the error that
// refused it; an error from fn stops reading.
//
// The two forms are told apart by the first non-blank line: if it is a JSON
// value on its own, the input is JSON lines; otherwise the whole input is
// one value (pretty-printed, say).
func readValues(r io.Reader, fn func(raw []byte, v any, err error) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var first []byte
	for {
		line, err := readLine(br)
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
	if v, err := canonical.Parse(first); err == nil {
		if err := fn(first, v, nil); err != nil {
			return err
		}
		for {
			line, err := readLine(br)
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if len(bytes.TrimSpace(line)) > 0 {
				v, perr := canonical.Parse(line)
				if ferr := fn(line, v, perr); ferr != nil {
					return ferr
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
		}
	}
	rest, err := io.ReadAll(io.LimitReader(br, maxLine))
	if err != nil {
		return err
	}
	all := append(first, rest...)
	v, perr := canonical.Parse(all)
	return fn(all, v, perr)
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}

// readAllInput reads stdin, or a file when path is given and not "-".
func openInput(s *stdio, path string) (io.Reader, func(), error) {
	if path == "" || path == "-" {
		return s.in, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return f, func() { f.Close() }, nil
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
// results and reports, not for anything hashed).
func writeJSON(s *stdio, v any) error {
	enc := json.NewEncoder(s.out)
	return enc.Encode(v)
}
