package record

import "github.com/minca-go/minca/canonical"

// File names a file a version carries outside its body (02 §3.1 files):
// the content id of its bytes and their size. In JSON it is {hash, size},
// hash the id's text.
type File struct {
	Hash canonical.ID `json:"hash"`
	Size int64        `json:"size"`
}

// FilesOf reads a files member: the entries that are {hash, size} with
// hash an id in its canonical text and size an integer from 0 to 2^53 − 1,
// in order, the others passed over — files is never a reason to refuse a
// version (02 §3.1). It is where a file's id is read from a version, once.
func FilesOf(val any) []File {
	arr, _ := val.([]any)
	if len(arr) == 0 {
		return nil
	}
	out := make([]File, 0, len(arr))
	for _, e := range arr {
		o, ok := e.(*canonical.Object)
		if !ok {
			continue
		}
		h, _ := o.Get("hash")
		sz, _ := o.Get("size")
		hs, _ := h.(string)
		d, ok1 := canonical.ParseExactID(hs)
		n, ok2 := safeInteger(sz)
		if ok1 && ok2 {
			out = append(out, File{Hash: d, Size: n})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// value is the entry of a files member naming f.
func (f File) value() *canonical.Object {
	return canonical.NewObject("hash", f.Hash.String(), "size", float64(f.Size))
}
