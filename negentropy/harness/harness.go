// Package harness speaks the line protocol of the reference negentropy
// test harness (hoytech/negentropy, test/js/harness.js and test/cpp), so the
// reference's interop scripts can drive this implementation.
//
// Input lines: "item,<timestamp>,<idhex>" adds an item, "seal" ends the
// items, "initiate" makes this side the client and prints its first message,
// "msg,<hex>" hands it a peer message. Output lines: "msg,<hex>",
// "have,<idhex>", "need,<idhex>" and "done". Nothing is printed before
// "initiate"; as a server, each "msg" gets exactly one "msg" line back.
package harness

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/minca-go/minca/negentropy"
)

// Storage names the storage a harness reconciles over.
type Storage string

// The storages a harness can use.
const (
	StorageVector Storage = "vector"
	StorageTree   Storage = "tree"
)

// Options configures [Run].
type Options struct {
	// FrameSizeLimit is the largest message written, 0 for none; values
	// under 4096 are refused, as in the reference.
	FrameSizeLimit uint64
	// Storage is the storage to use; empty means [StorageVector].
	Storage Storage
}

// Run reads commands from in until it ends or ctx is done and writes answers
// to out, flushing after each command. A malformed line or peer message ends
// it with an error naming the line.
func Run(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.FrameSizeLimit != 0 && opts.FrameSizeLimit < negentropy.MinFrameSizeLimit {
		return fmt.Errorf("harness: %w: %d", negentropy.ErrFrameSizeLimit, opts.FrameSizeLimit)
	}
	h := &state{opts: opts, w: bufio.NewWriterSize(out, 1<<16)}
	switch opts.Storage {
	case "", StorageVector:
		h.vec = negentropy.NewVector(0)
	case StorageTree:
		h.tree = negentropy.NewTree()
	default:
		return fmt.Errorf("harness: unknown storage %q (want vector or tree)", opts.Storage)
	}
	br := bufio.NewReaderSize(in, 1<<16)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("harness: reading line %d: %w", n, err)
		}
		if l := strings.TrimRight(line, "\r\n"); l != "" {
			if cerr := h.command(l); cerr != nil {
				return fmt.Errorf("harness: line %d: %w", n, cerr)
			}
			if ferr := h.w.Flush(); ferr != nil {
				return fmt.Errorf("harness: writing: %w", ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

type state struct {
	opts   Options
	w      *bufio.Writer
	vec    *negentropy.Vector
	tree   *negentropy.Tree
	sealed bool
	client *negentropy.Client
	server *negentropy.Server
}

func (h *state) storage() negentropy.Storage {
	if h.tree != nil {
		return h.tree
	}
	return h.vec
}

func (h *state) command(line string) error {
	verb, rest, _ := strings.Cut(line, ",")
	switch verb {
	case "item":
		return h.item(rest)
	case "seal":
		if h.sealed {
			return errors.New("seal: already sealed")
		}
		h.sealed = true
		if h.vec != nil {
			return h.vec.Seal()
		}
		return nil
	case "initiate":
		return h.initiate()
	case "msg":
		return h.msg(rest)
	default:
		return fmt.Errorf("unknown command %q", verb)
	}
}

func (h *state) item(rest string) error {
	tsText, idText, ok := strings.Cut(rest, ",")
	if !ok || strings.Contains(idText, ",") {
		return errors.New("item: want item,<timestamp>,<idhex>")
	}
	if h.sealed {
		return negentropy.ErrSealed
	}
	ts, err := strconv.ParseUint(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("item: timestamp: %w", err)
	}
	id, err := negentropy.ParseID(strings.TrimSpace(idText))
	if err != nil {
		return fmt.Errorf("item: %w", err)
	}
	if h.tree != nil {
		return h.tree.Insert(negentropy.Item{Timestamp: ts, ID: id})
	}
	return h.vec.Insert(ts, id)
}

func (h *state) initiate() error {
	if !h.sealed {
		return errors.New("initiate: not sealed")
	}
	if h.client != nil {
		return negentropy.ErrInitiated
	}
	h.server = nil // a probe answered as server before initiate ends there
	c, err := negentropy.NewClient(h.storage(), h.opts.FrameSizeLimit)
	if err != nil {
		return err
	}
	h.client = c
	q, err := c.Initiate()
	if err != nil {
		return err
	}
	return h.writeMsg(q)
}

func (h *state) msg(rest string) error {
	if !h.sealed {
		return errors.New("msg: not sealed")
	}
	q, err := hex.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return fmt.Errorf("msg: %w", err)
	}
	if h.client != nil {
		r, err := h.client.Reconcile(q)
		if err != nil {
			return err
		}
		for _, id := range r.Have {
			fmt.Fprintf(h.w, "have,%x\n", id[:])
		}
		for _, id := range r.Need {
			fmt.Fprintf(h.w, "need,%x\n", id[:])
		}
		if r.Next == nil {
			_, err := h.w.WriteString("done\n")
			return err
		}
		return h.writeMsg(r.Next)
	}
	if h.server == nil {
		if h.server, err = negentropy.NewServer(h.storage(), h.opts.FrameSizeLimit); err != nil {
			return err
		}
	}
	a, err := h.server.Reconcile(q)
	if err != nil {
		return err
	}
	return h.writeMsg(a)
}

func (h *state) writeMsg(m []byte) error {
	if l := h.opts.FrameSizeLimit; l != 0 && uint64(len(m)) > l {
		return fmt.Errorf("message of %d bytes exceeds frame size limit %d", len(m), l)
	}
	h.w.WriteString("msg,")
	buf := make([]byte, hex.EncodedLen(len(m)))
	hex.Encode(buf, m)
	h.w.Write(buf)
	_, err := h.w.WriteString("\n")
	return err
}
