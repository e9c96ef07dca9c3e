package space_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

func knownCode(err error) bool {
	var r *record.Refusal
	if !errors.As(err, &r) {
		return false
	}
	return slices.Contains(space.Codes(), r.Code) || slices.Contains(record.Codes(), r.Code)
}

// FuzzParseGenesis: any bytes are a genesis or a refusal with a known code,
// never a panic; a genesis read back from its canonical form is the same
// space.
func FuzzParseGenesis(f *testing.F) {
	f.Add([]byte(`{"v":1,"name":"Book club","visibility":"public","founders":["did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E"],"roles":{"writer":{"grants":[{"cmd":"/record","pol":[["==",".collection","app.chat"]]}]}},"createdAt":"2026-10-01T09:00:00.000Z","nonce":"n"}`))
	f.Add([]byte(`{"v":1,"name":"r","visibility":"private","founders":["did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E"],"account":true,"encryptionKeyId":"bk","createdAt":"2026-10-01T09:00:00Z","nonce":"n"}`))
	f.Add([]byte(`{"v":2,"founders":[],"roles":{"A":{"grants":[{"cmd":"x"}]}},"extra":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := space.ParseGenesis(data)
		if err != nil {
			if !knownCode(err) {
				t.Fatalf("%v", err)
			}
			return
		}
		again, err := space.ParseGenesisFor(g.ID, g.Canonical())
		if err != nil || !bytes.Equal(again.Canonical(), g.Canonical()) {
			t.Fatalf("read back: %v", err)
		}
	})
}

// FuzzReadChange: any body in any access collection, signed, is read into a
// change or refused with a known code, and a change read is judged by a
// small history without a panic.
func FuzzReadChange(f *testing.F) {
	f.Add(uint8(0), "role:writer", []byte(`{"name":"writer","grants":[{"cmd":"/record"}],"keep":{}}`))
	f.Add(uint8(1), "member:", []byte(`{"member":"did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E","roles":["writer"],"invite":{"key":"did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E","sig":"AA"}}`))
	f.Add(uint8(4), "revoke:", []byte(`{"key":"did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E","root":"did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E","cutoffs":{"app.chat":3}}`))
	f.Add(uint8(5), "collection:app.chat", []byte(`{"name":"app.chat","version":1,"schema":{"type":"object"}}`))
	f.Add(uint8(9), "fork:", []byte(`{"proof":{"kind":"fork","versions":[{},{}]}}`))
	f.Add(uint8(7), "relays", []byte(`{"relays":["wss://a","ws://b"]}`))
	f.Add(uint8(8), "keepers", []byte(`{"keepers":[{"did":"did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E","name":"k"}]}`))
	key, err := identity.GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "f", Founders: []string{key.DID()}, CreatedAt: "2026-01-01T00:00:00Z", Nonce: "f",
		Roles: map[string][]space.Grant{"writer": {space.MustGrant("/record")}}})
	if err != nil {
		f.Fatal(err)
	}
	colls := []string{"sys.role", "sys.assign", "sys.remove", "sys.invite", "sys.revoke", "sys.collection", "sys.key",
		"sys.relays", "sys.keepers", "sys.fork", "sys.stepdown", "sys.succeed"}
	f.Fuzz(func(t *testing.T, which uint8, key0 string, body []byte) {
		b, err := canonical.Parse(body)
		if err != nil || !record.ValidKey(key0) {
			return
		}
		o := canonical.NewObject("collection", colls[int(which)%len(colls)], "createdAt", "2026-01-01T00:00:00Z", "key", key0,
			"seq", float64(0), "space", g.ID, "log", canonical.NewObject("n", float64(0)), "retain", true, "body", b)
		v, err := record.Sign(o, key)
		if err != nil {
			return
		}
		c, err := space.ReadChange(g, v, key.DID(), space.Env{})
		if err != nil {
			if !knownCode(err) {
				t.Fatalf("%v", err)
			}
			return
		}
		h := space.NewHistory(g, space.Env{})
		if _, err := h.Add(c); err != nil && !knownCode(err) {
			t.Fatalf("%v", err)
		}
		h.Now().Members()
		h.Now().Definitions()
	})
}
