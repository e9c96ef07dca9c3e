package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
)

// Codes of the file routes (docs/api.md, Files).
const (
	// CodeFileNotHeld: the node does not hold the file (yet): answered 404,
	// and the node asks its peers for it when a version of the space names
	// it.
	CodeFileNotHeld = "file/not-held"
	// CodeFileNoKey: the file is sealed under a key of the private space
	// the node does not hold, answered 403.
	CodeFileNoKey = "file/no-key"
)

// MaxFileWait bounds ?wait= on GET …/files/{hash}.
const MaxFileWait = 5 * time.Minute

func (s *Server) fileRoutes(h func(string, func(http.ResponseWriter, *http.Request) error)) {
	h("POST /v1/spaces/{space}/files", s.putFile)
	h("GET /v1/spaces/{space}/files/{hash}", s.getFile)
	h("HEAD /v1/spaces/{space}/files/{hash}", s.getFile)
	h("GET /v1/spaces/{space}/records/{key}/files", s.recordFiles)
}

// putFile keeps the request body as a file of the space, streamed to disk
// (sealed as it goes in a private space), and answers {hash, size}: how a
// write names it.
func (s *Server) putFile(w http.ResponseWriter, r *http.Request) error {
	u, err := s.n.NewFile(r.Context(), r.PathValue("space"))
	if err != nil {
		return err
	}
	defer u.Close()
	if _, err := io.CopyBuffer(u, r.Body, make([]byte, 256<<10)); err != nil {
		if r.Context().Err() != nil {
			return r.Context().Err()
		}
		return bad(CodeBad, "", "reading the file: "+err.Error())
	}
	f, err := u.Keep(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, f)
	return nil
}

// getFile streams a held file of the space (opened in a private space),
// with Range; 404 file/not-held when it is not held, after asking the
// node's peers for it, and after waiting up to ?wait= for it to arrive.
func (s *Server) getFile(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sp := r.PathValue("space")
	hash, err := canonical.ParseID(r.PathValue("hash"))
	if err != nil {
		return bad(CodeBad, "hash", "a file's hash is a content id (b and the base32 of its SHA-256): "+err.Error())
	}
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > MaxFileWait {
			return bad(CodeBad, "wait", "wait is a duration from 0s to "+MaxFileWait.String()+" (30s)")
		}
		wait = d
	}
	f, err := s.n.OpenFile(ctx, sp, hash)
	if errors.Is(err, engine.ErrNotFound) {
		if _, err := s.n.WantFile(ctx, sp, hash); err != nil {
			return err
		}
		if wait > 0 {
			wctx, cancel := context.WithTimeout(ctx, wait)
			werr := s.n.WaitFile(wctx, hash)
			cancel()
			if werr == nil {
				f, err = s.n.OpenFile(ctx, sp, hash)
			} else if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return bad(CodeFileNotHeld, "hash", "the node does not hold the file "+hash.String()+" (yet): it asks its peers for it when a version of the space names it; ?wait=30s waits for it")
	case errors.Is(err, node.ErrNoKey):
		return bad(CodeFileNoKey, "hash", err.Error())
	case err != nil:
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("ETag", `"`+hash.String()+`"`)
	w.Header().Set("Cache-Control", "private, immutable")
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(f, 0, f.Size()))
	return nil
}

// recordFiles lists the files a record's readable current version names,
// each with whether it is held: {files: [{hash, size, held}]}.
func (s *Server) recordFiles(w http.ResponseWriter, r *http.Request) error {
	fs, err := s.n.RecordFiles(r.Context(), r.PathValue("space"), r.PathValue("key"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": fs})
	return nil
}

// Upload sends a file's bytes to POST /v1/spaces/{space}/files as a stream
// and returns how a write names it.
func (c *Client) Upload(ctx context.Context, spaceID string, body io.Reader) (node.FileRef, error) {
	resp, err := c.send(ctx, http.MethodPost, "/v1/spaces/"+url.PathEscape(spaceID)+"/files", body, "application/octet-stream")
	if err != nil {
		return node.FileRef{}, err
	}
	defer resp.Body.Close()
	var f node.FileRef
	if err := decodeAnswer(resp, &f); err != nil {
		return node.FileRef{}, err
	}
	return f, nil
}

// Download streams a held file of the space into out, waiting up to wait
// for it to arrive (0: not at all); an *Error file/not-held when the node
// does not hold it.
func (c *Client) Download(ctx context.Context, spaceID, hash string, wait time.Duration, out io.Writer) (int64, error) {
	p := "/v1/spaces/" + url.PathEscape(spaceID) + "/files/" + url.PathEscape(hash)
	if wait > 0 {
		p += "?wait=" + wait.String()
	}
	resp, err := c.send(ctx, http.MethodGet, p, nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return 0, decodeAnswer(resp, nil)
	}
	n, err := io.Copy(out, resp.Body)
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
