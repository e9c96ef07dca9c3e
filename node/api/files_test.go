package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"net/http"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

// A file uploaded as a stream is answered with its {hash, size}, named by
// a write, listed with its record, read whole and by Range; a hash the node
// does not hold is 404 file/not-held, at once or after ?wait=.
func TestAPIFiles(t *testing.T) {
	for _, private := range []bool{false, true} {
		t.Run(map[bool]string{false: "public", true: "private"}[private], func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			g, err := f.n.CreateSpace(ctx, "photos", &node.CreateOptions{Private: private})
			if err != nil {
				t.Fatal(err)
			}
			c := api.NewClient(f.srv.URL, f.token)
			data := make([]byte, 1<<20+333)
			rand.New(rand.NewSource(7)).Read(data)
			ref, err := c.Upload(ctx, g.ID, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if private == (ref.Hash == canonical.IDOf(data)) || (!private && ref.Size != int64(len(data))) {
				t.Fatalf("the upload answered %+v", ref)
			}
			req, _ := json.Marshal(map[string]any{"collection": "app.photo", "body": map[string]any{"t": 1}, "files": []node.FileRef{ref}})
			out, err := c.Do(ctx, "POST", "/v1/spaces/"+g.ID+"/records", req)
			if err != nil {
				t.Fatal(err)
			}
			var v struct{ Key string }
			json.Unmarshal(out, &v)
			out, err = c.Do(ctx, "GET", "/v1/spaces/"+g.ID+"/records/"+v.Key+"/files", nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed struct {
				Files []struct {
					Hash string
					Size int64
					Held bool
				}
			}
			if json.Unmarshal(out, &listed); len(listed.Files) != 1 || listed.Files[0].Hash != ref.Hash.String() || listed.Files[0].Size != ref.Size || !listed.Files[0].Held {
				t.Fatalf("the record's files: %s", out)
			}

			var got bytes.Buffer
			if _, err := c.Download(ctx, g.ID, ref.Hash.String(), 0, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("the file reads back %d bytes (%v), want %d", got.Len(), err, len(data))
			}
			r, _ := http.NewRequest("GET", f.srv.URL+"/v1/spaces/"+g.ID+"/files/"+ref.Hash.String(), nil)
			r.Header.Set("Authorization", "Bearer "+f.token)
			r.Header.Set("Range", "bytes=70000-70099")
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			part, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, data[70000:70100]) {
				t.Fatalf("a Range answers %d with %d bytes", resp.StatusCode, len(part))
			}

			missing := canonical.IDOf([]byte("nowhere")).String()
			start := time.Now()
			_, err = c.Download(ctx, g.ID, missing, 300*time.Millisecond, io.Discard)
			var ae *api.Error
			if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != api.CodeFileNotHeld {
				t.Fatalf("a file not held: %v", err)
			}
			if time.Since(start) < 300*time.Millisecond {
				t.Fatal("?wait= did not wait")
			}
			if st, b := f.do("GET", "/v1/spaces/"+g.ID+"/files/not-a-hash", f.token, nil); st != http.StatusBadRequest || code(b) != api.CodeBad {
				t.Fatalf("a hash that is not one: %d %s", st, b)
			}
			req, _ = json.Marshal(map[string]any{"collection": "app.photo", "body": map[string]any{"t": 2}, "files": []map[string]any{{"hash": "not-a-hash", "size": 7}}})
			if st, b := f.do("POST", "/v1/spaces/"+g.ID+"/records", f.token, req); st != http.StatusBadRequest || code(b) != api.CodeBad || !bytes.Contains(b, []byte(`"files"`)) {
				t.Fatalf("a write naming a file by what is no hash: %d %s", st, b)
			}
			req, _ = json.Marshal(map[string]any{"collection": "app.photo", "body": map[string]any{"t": 2}, "files": []map[string]any{{"hash": missing, "size": 7}}})
			if st, b := f.do("POST", "/v1/spaces/"+g.ID+"/records", f.token, req); st != http.StatusUnprocessableEntity || code(b) != node.CodeFileNotHeld {
				t.Fatalf("a write naming a file never uploaded: %d %s", st, b)
			}
		})
	}
}

// A file waited for is answered as soon as it arrives.
func TestAPIFileWaitAnswersOnArrival(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	g, err := f.n.CreateSpace(ctx, "photos", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := api.NewClient(f.srv.URL, f.token)
	data := []byte("late bytes")
	done := make(chan error, 1)
	var got bytes.Buffer
	go func() {
		_, err := c.Download(ctx, g.ID, canonical.IDOf(data).String(), 10*time.Second, &got)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := f.n.PutFile(ctx, g.ID, data); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || got.String() != string(data) {
			t.Fatalf("the waited-for file: %q (%v)", got.String(), err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the wait did not end when the file arrived")
	}
}
