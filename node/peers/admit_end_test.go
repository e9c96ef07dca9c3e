package peers_test

import (
	"context"
	"testing"
	"time"
)

// A push that arrived whole is admitted though its connection ends right
// after it: the peer sent it and this end read it, so nothing of it is
// lost because the session that read it ended before the batch was
// checked and decided.
func TestPushAdmittedThoughTheConnectionEnds(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	for i := range 300 {
		a.put(g.ID, "app.notes", i)
	}
	var raws [][]byte
	var ids []string
	for v, err := range a.Store().Export(context.Background(), g.ID) {
		if err != nil {
			t.Fatal(err)
		}
		raw, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		raws, ids = append(raws, raw), append(ids, v.ID)
	}
	h := newHostile(t, b, nil)
	if err := h.send(negOpen(t, 1, g.ID, nil)); err != nil {
		t.Fatal(err)
	}
	h.until(tNegMsg, 1)
	if err := h.send(versions(2, 1, raws...)); err != nil {
		t.Fatal(err)
	}
	h.c.Close()
	eventually(t, 20*time.Second, "b holds every version of the push", func() bool {
		for _, id := range ids {
			if _, _, err := b.Store().Standing(context.Background(), id); err != nil {
				return false
			}
		}
		return true
	})
}
