package segment

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Limits bound what a reader accepts. Zero fields take the defaults.
type Limits struct {
	// MaxRaw is the most bytes of lines a segment may decode to.
	// Default 256 MiB.
	MaxRaw uint64
	// MaxWindow is the largest zstd window accepted, in bytes. Default 8 MiB.
	MaxWindow uint64
}

func (l Limits) withDefaults() Limits {
	if l.MaxRaw == 0 {
		l.MaxRaw = 256 << 20
	}
	if l.MaxWindow == 0 {
		l.MaxWindow = 8 << 20
	}
	return l
}

// Segment is a decoded segment. Lines share one buffer that the caller owns.
type Segment struct {
	Trailer
	Lines [][]byte // each a version's canonical JSON, without its '\n'
}

// Codec encodes and decodes segments, reusing its zstd state. A Codec is
// not safe for concurrent use; Close releases it.
type Codec struct {
	lim Limits
	enc *zstd.Encoder
	dec *zstd.Decoder
	buf bytes.Buffer
}

// NewCodec returns a codec with the given reading limits.
func NewCodec(lim Limits) (*Codec, error) {
	lim = lim.withDefaults()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithWindowSize(4<<20),
		zstd.WithEncoderCRC(false)) // the trailer's SHA-256 covers it
	if err != nil {
		return nil, fmt.Errorf("minca/segment: zstd writer: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(lim.MaxWindow), zstd.WithDecoderMaxMemory(lim.MaxRaw))
	if err != nil {
		enc.Close()
		return nil, fmt.Errorf("minca/segment: zstd reader: %w", err)
	}
	return &Codec{lim: lim, enc: enc, dec: dec}, nil
}

// Close releases the codec.
func (c *Codec) Close() {
	c.enc.Close()
	c.dec.Close()
}

// Header is what a writer says about a segment it encodes.
type Header struct {
	Writer string
	Seq    uint64
	Base   uint64 // 0 means Seq
	Flags  uint32
}

// Encode builds a segment of lines (each one version's JSON, without a
// newline). The result is a fresh slice.
func (c *Codec) Encode(h Header, lines [][]byte) ([]byte, Trailer, error) {
	t := Trailer{Writer: h.Writer, Seq: h.Seq, Base: h.Base, Flags: h.Flags, Count: uint32(len(lines))}
	if t.Base == 0 {
		t.Base = t.Seq
	}
	if !ValidWriterID(h.Writer) || h.Seq == 0 || t.Base > t.Seq || uint64(len(lines)) > 1<<32-1 {
		return nil, t, fmt.Errorf("minca/segment: encode: bad header (writer %q, seq %d, base %d)", h.Writer, h.Seq, t.Base)
	}
	c.buf.Reset()
	for i, l := range lines {
		if len(l) == 0 || bytes.IndexByte(l, '\n') >= 0 {
			return nil, t, fmt.Errorf("minca/segment: encode: line %d is empty or holds a newline", i)
		}
		c.buf.Write(l)
		c.buf.WriteByte('\n')
	}
	raw := c.buf.Bytes()
	t.RawLen = uint64(len(raw))
	if t.RawLen > c.lim.MaxRaw {
		return nil, t, fmt.Errorf("minca/segment: encode: %d bytes of lines is over the %d a reader accepts", t.RawLen, c.lim.MaxRaw)
	}
	out := make([]byte, 0, HeaderSize+len(raw)/3+TrailerSize)
	out = append(out, headerMagic[:]...)
	if len(raw) > 0 {
		out = c.enc.EncodeAll(raw, out)
	}
	t.PayloadLen = uint64(len(out) - HeaderSize)
	out = appendTrailer(out, &t)
	t.Sum = sha256.Sum256(out)
	out = append(out, t.Sum[:]...)
	out = append(out, trailerMagic[:]...)
	return out, t, nil
}

// Decode checks a whole segment and returns its lines. Any defect is an
// [*Error]; it never panics and allocates by what it decodes, not by what
// the segment claims.
func (c *Codec) Decode(data []byte) (*Segment, error) {
	t, err := ReadTrailer(data)
	if err != nil {
		return nil, err
	}
	if t.RawLen > c.lim.MaxRaw {
		return nil, corrupt("segment/too-big", "%d bytes of lines is over the limit of %d", t.RawLen, c.lim.MaxRaw)
	}
	s := &Segment{Trailer: t}
	if t.RawLen == 0 {
		if t.PayloadLen != 0 {
			return nil, corrupt("segment/length", "an empty segment has an empty payload")
		}
		return s, nil
	}
	payload := data[HeaderSize : len(data)-TrailerSize]
	if err := c.dec.Reset(bytes.NewReader(payload)); err != nil {
		return nil, corrupt("segment/zstd", "%v", err)
	}
	var raw bytes.Buffer
	n, err := io.Copy(&raw, io.LimitReader(c.dec, int64(t.RawLen)+1))
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, corrupt("segment/too-big", "%v", err)
		}
		return nil, corrupt("segment/zstd", "%v", err)
	}
	if uint64(n) != t.RawLen {
		return nil, corrupt("segment/length", "the payload decodes to %d bytes or more, the trailer says %d", n, t.RawLen)
	}
	b := raw.Bytes()
	if b[len(b)-1] != '\n' {
		return nil, corrupt("segment/lines", "the last line has no newline")
	}
	s.Lines = make([][]byte, 0, min(uint64(t.Count), uint64(len(b)/2)))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i == 0 {
			return nil, corrupt("segment/lines", "line %d is empty", len(s.Lines))
		}
		s.Lines = append(s.Lines, b[:i:i])
		b = b[i+1:]
	}
	if uint64(len(s.Lines)) != uint64(t.Count) {
		return nil, corrupt("segment/count", "%d lines, the trailer says %d", len(s.Lines), t.Count)
	}
	return s, nil
}
