package negentropy

import (
	"bytes"
	"errors"
	"testing"
)

func oneItemVector(t testing.TB) *Vector {
	v := NewVector(1)
	var id ID
	id[0] = 0xee
	if err := v.Insert(12345, id); err != nil {
		t.Fatal(err)
	}
	if err := v.Seal(); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBadInput(t *testing.T) {
	ids := bytes.Repeat([]byte{0xab}, 64)
	cases := map[string][]byte{
		"empty":                {},
		"version 0x00":         {0x00},
		"version 0x70":         {0x70, 0x00, 0x00, 0x02, 0x00},
		"truncated timestamp":  {0x61, 0x80},
		"timestamp past 64bit": {0x61, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x00},
		"no id length":         {0x61, 0x00},
		"prefix of 33":         append([]byte{0x61, 0x00, 33}, bytes.Repeat([]byte{1}, 33)...),
		"truncated prefix":     {0x61, 0x01, 0x05, 0x01, 0x02},
		"no mode":              {0x61, 0x00, 0x00},
		"unknown mode":         {0x61, 0x00, 0x00, 0x03},
		"huge mode":            {0x61, 0x00, 0x00, 0x8f, 0xff, 0xff, 0xff, 0x7f},
		"short fingerprint":    {0x61, 0x00, 0x00, 0x01, 1, 2, 3},
		"id list too long":     append([]byte{0x61, 0x00, 0x00, 0x02, 0x03}, ids...),
		"id list of 2^63":      {0x61, 0x00, 0x00, 0x02, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},
		"id list short by one": append([]byte{0x61, 0x00, 0x00, 0x02, 0x02}, ids[:63]...),
		"bounds out of order":  {0x61, 0x0b, 0x01, 0x05, 0x00, 0x01, 0x01, 0x03, 0x00},
		"bound after infinity, lower id": {
			0x61, 0x00, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00,
		},
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			srv, _ := NewServer(oneItemVector(t), 0)
			if out, err := srv.Reconcile(msg); !errors.Is(err, ErrMalformed) {
				t.Errorf("server: out %x, err %v; want ErrMalformed", out, err)
			}
			cl, _ := NewClient(oneItemVector(t), 0)
			if r, err := cl.Reconcile(msg); !errors.Is(err, ErrMalformed) {
				t.Errorf("client: next %x, err %v; want ErrMalformed", r.Next, err)
			}
		})
	}
}

func TestVersionDowngrade(t *testing.T) {
	srv, _ := NewServer(oneItemVector(t), 0)
	out, err := srv.Reconcile([]byte{0x62, 0xaa, 0xbb})
	if err != nil || !bytes.Equal(out, []byte{0x61}) {
		t.Fatalf("server answer to 0x62: %x, %v; want 61", out, err)
	}
	out, err = srv.Reconcile([]byte{0x61, 0x00, 0x00, 0x02, 0x00})
	want := append([]byte{0x61, 0x00, 0x00, 0x02, 0x01, 0xee}, make([]byte, 31)...)
	if err != nil || !bytes.Equal(out, want) {
		t.Fatalf("server after downgrade: %x, %v; want %x", out, err, want)
	}
	cl, _ := NewClient(oneItemVector(t), 0)
	var ve *VersionError
	if _, err := cl.Reconcile([]byte{0x62}); !errors.As(err, &ve) || ve.Version != 0x62 {
		t.Fatalf("client given 0x62: %v; want VersionError", err)
	}
}

func TestFrameSizeLimitRefused(t *testing.T) {
	v := oneItemVector(t)
	for _, l := range []uint64{1, 200, 4095} {
		if _, err := NewClient(v, l); !errors.Is(err, ErrFrameSizeLimit) {
			t.Errorf("NewClient limit %d: %v", l, err)
		}
		if _, err := NewServer(v, l); !errors.Is(err, ErrFrameSizeLimit) {
			t.Errorf("NewServer limit %d: %v", l, err)
		}
	}
	if _, err := NewServer(v, 4096); err != nil {
		t.Errorf("limit 4096: %v", err)
	}
}

func TestInitiateTwice(t *testing.T) {
	cl, _ := NewClient(oneItemVector(t), 0)
	if _, err := cl.Initiate(); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Initiate(); !errors.Is(err, ErrInitiated) {
		t.Fatalf("second Initiate: %v", err)
	}
}

func TestVectorMisuse(t *testing.T) {
	v := NewVector(0)
	if _, err := v.Fingerprint(0, 0); !errors.Is(err, ErrNotSealed) {
		t.Errorf("unsealed read: %v", err)
	}
	if err := v.Insert(MaxTimestamp, ID{}); !errors.Is(err, ErrInfiniteTimestamp) {
		t.Errorf("infinite timestamp: %v", err)
	}
	_ = v.Insert(1, ID{1})
	_ = v.Insert(1, ID{1})
	if err := v.Seal(); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	v = oneItemVector(t)
	if err := v.Insert(1, ID{}); !errors.Is(err, ErrSealed) {
		t.Errorf("insert after seal: %v", err)
	}
	for _, r := range [][2]int{{-1, 0}, {1, 0}, {0, 2}} {
		if _, err := v.Fingerprint(r[0], r[1]); !errors.Is(err, ErrRange) {
			t.Errorf("range %v: %v", r, err)
		}
	}
}
