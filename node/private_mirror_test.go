package node_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/store"
)

// Every byte a node's mirrors write of a private space — a data folder
// and an S3 bucket, segments and files — holds a known plaintext marker
// nowhere, raw or in a decoded segment, while a public space's marker
// written in the same run is found there (so the search can find one).
// The index, which holds opened bodies, is the local store's alone.
func TestPrivateNothingInTheClearInMirrors(t *testing.T) {
	ctx := context.Background()
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	folder := t.TempDir()
	bucket := "s3://bkt/mirror?region=us-east-1&path-style=true&endpoint=" + srv.URL
	o := &node.Options{Mirrors: []string{"folder:" + folder, bucket},
		StoreOptions: &store.Options{S3: &s3.Options{Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), MaxAttempts: 2}}}
	tn, g := privateNode(t, o, writers)

	const marker, public = "PLAINTEXT-MARKER-7f3a", "PUBLIC-MARKER-51c9"
	def, _ := canonical.Parse([]byte(`{"name":"app.note","version":1,"title":"` + marker + `","schema":{"type":"object"},"links":{"about":{"to":"*"}},"topics":["tag"]}`))
	if _, err := tn.Define(ctx, g.ID, def); err != nil {
		t.Fatal(err)
	}
	f, err := tn.PutFile(ctx, g.ID, []byte("a file holding "+marker))
	if err != nil {
		t.Fatal(err)
	}
	v := put(t, tn, g.ID, "app.note", canonical.NewObject("text", marker, "tag", marker),
		&node.PutOptions{Links: []record.Link{{Rel: "about", To: "plaintext-marker-7f3a"}}, Files: []node.FileRef{f}})
	put(t, tn, g.ID, "app.note", canonical.NewObject("text", "edit "+marker), &node.PutOptions{Key: v.Key})
	if got, err := tn.File(ctx, g.ID, f.Hash); err != nil || string(got) != "a file holding "+marker {
		t.Fatalf("the node opens its sealed file as %q (%v)", got, err)
	}
	pub := tn.space("public", nil)
	put(t, tn, pub.ID, "app.note", canonical.NewObject("text", public), nil)
	if err := tn.Close(); err != nil { // the mirrors export all they hold
		t.Fatal(err)
	}

	var blobs [][]byte
	if err := filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		blobs = append(blobs, b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	fromFolder := len(blobs)
	list, err := be.ListBucket("bkt", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Contents {
		obj, err := be.GetObject("bkt", c.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(obj.Contents)
		obj.Contents.Close()
		blobs = append(blobs, b.Bytes())
	}
	if fromFolder == 0 || len(blobs) == fromFolder {
		t.Fatalf("the mirrors wrote %d objects to the folder and %d to the bucket", fromFolder, len(blobs)-fromFolder)
	}
	lower := bytes.ToLower([]byte(marker))
	foundPublic := 0
	for i, b := range blobs {
		texts := [][]byte{b}
		if lines, err := mirror.DecodeSegment(b); err == nil {
			texts = append(texts, lines...)
		}
		for _, x := range texts {
			if bytes.Contains(x, []byte(marker)) || bytes.Contains(bytes.ToLower(x), lower) {
				t.Errorf("object %d of the mirrors holds the private marker in the clear", i)
			}
			if bytes.Contains(x, []byte(public)) {
				foundPublic++
			}
		}
	}
	if foundPublic < 2 {
		t.Errorf("the public marker is found in %d objects, want it in the folder's and the bucket's segments", foundPublic)
	}
}
