package api

import (
	"errors"
	"net/http"

	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/store"
)

// Errors of backups and restores (docs/api.md, Backups).
const (
	CodeBlobsURL         = "blobs/url"         // not a blob store URL, or one the node mirrors already (400)
	CodeBlobsNotFound    = "blobs/not-found"   // no blob store there to restore from (404)
	CodeBlobsChanged     = "blobs/changed"     // another blob store where the node backed up before, or one that lost segments: adopt it (409)
	CodeBlobsBadSegment  = "blobs/bad-segment" // segments that fail their checks; everything else was read (422)
	CodeBlobsUnreachable = "blobs/unreachable" // the folder or bucket could not be reached: try again (503)
)

// backup is POST /v1/backup {to, adopt?}: the node's store's new versions
// to the blob store as segments, with the geneses (node.Backup); answers
// {segments, versions, bytes}.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	url, adopt, err := s.blobsRequest(r, "to")
	if err != nil {
		return err
	}
	res, err := s.n.Backup(r.Context(), url, &node.BackupOptions{Adopt: adopt})
	if err != nil {
		return blobsError(err)
	}
	if res.Segments == nil {
		res.Segments = []string{}
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// restore is POST /v1/restore {from, adopt?}: every version of the blob
// store's segments into the node's store, its geneses first, then the
// spaces restored kept (node.Restore); answers {writers, segments,
// versions, stored, …}, and with bad segments 422 naming them after
// reading everything else.
func (s *Server) restore(w http.ResponseWriter, r *http.Request) error {
	url, adopt, err := s.blobsRequest(r, "from")
	if err != nil {
		return err
	}
	res, err := s.n.Restore(r.Context(), url, &node.BackupOptions{Adopt: adopt})
	if err != nil {
		return blobsError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) blobsRequest(r *http.Request, member string) (string, bool, error) {
	o, err := s.readObject(r, []string{member, "adopt"}, member)
	if err != nil {
		return "", false, err
	}
	url, err := str(o, member)
	if err != nil {
		return "", false, err
	}
	adopt := false
	if v, ok := o.Get("adopt"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return "", false, bad(CodeBad, "adopt", "adopt is true or false")
		}
		adopt = b
	}
	return url, adopt, nil
}

// blobsError is the API error of a backup's or restore's failure.
func blobsError(err error) error {
	var code string
	switch {
	case errors.Is(err, store.ErrBadURL), errors.Is(err, s3.ErrConfig):
		code = CodeBlobsURL
	case errors.Is(err, engine.ErrNoStore), errors.Is(err, engine.ErrBlobStoreGone):
		code = CodeBlobsNotFound
	case errors.Is(err, mirror.ErrBlobStoreChanged), errors.Is(err, mirror.ErrBlobStoreShrunk):
		code = CodeBlobsChanged
	case errors.Is(err, mirror.ErrBadSegment):
		code = CodeBlobsBadSegment
	case errors.Is(err, engine.ErrUnreachable):
		code = CodeBlobsUnreachable
	default:
		return err
	}
	return &apiError{Code: code, Message: err.Error()}
}
