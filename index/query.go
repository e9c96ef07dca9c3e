package index

import (
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// Query is a parsed query: 06 §2.11's { collection, where? } with a page's
// order, limit and cursor (docs/queries.md). A Query is immutable and safe
// to share; [Parse] is the only way to make one.
type Query struct {
	// Collection is the collection queried.
	Collection string
	// Order is what the results are sorted by.
	Order Order
	// Limit is the most entries a page holds (1 … MaxLimit).
	Limit int
	// Cursor is where the page starts: "" for the first page, else a
	// page's Next.
	Cursor string

	where  *node // nil: every record
	whereV any   // where as written, for the fingerprint
	hasMe  bool
	paging []string // the paging members given, for a live query's refusal

	fpOnce sync.Once // the fingerprint of a query without "$me", made once
	fp     [16]byte
	fpErr  error
}

// Order is a query's sort: by @createdAt (the default), @key or a body
// field, ascending unless Desc. Ties are broken by @createdAt, then @key.
type Order struct {
	By   string // "@createdAt", "@key" or a body field path
	Desc bool
	attr attr
}

// collectionMax bounds a queried collection's name, in bytes.
const collectionMax = 256

// Parse reads a query from its JSON text: { collection, where?, order?,
// limit?, cursor? }, nothing else. A malformed query is refused with an
// [*Error] naming the bad member.
func Parse(data []byte) (*Query, error) {
	if len(data) > MaxQueryBytes {
		return nil, refuse(CodeTooLarge, "", "a query is at most 64 KiB of JSON")
	}
	v, err := canonical.Parse(data)
	if err != nil {
		var ce *canonical.Error
		msg := err.Error()
		if errors.As(err, &ce) {
			msg = ce.Msg
		}
		return nil, refuse(CodeJSON, "", "not JSON: "+msg)
	}
	return ParseValue(v)
}

// ParseValue reads a query already parsed as JSON (canonical's model).
func ParseValue(v any) (*Query, error) { return parseQuery(v, false) }

// ParseProposal reads the query of a proposed automation (06 §2.11's
// when.query): { collection, where? } and nothing else, the collection a
// name of 02 §6.1 that does not start with sys. Paths in errors are
// relative to the query.
func ParseProposal(v any) (*Query, error) { return parseQuery(v, true) }

func parseQuery(v any, proposal bool) (*Query, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeJSON, "", "a query is a JSON object, not "+describe(v))
	}
	q := &Query{Limit: DefaultLimit, Order: Order{By: "@createdAt", attr: createdAttr}}
	p := &filterParser{proposal: proposal}
	seenCollection := false
	for _, m := range o.Members {
		at := member("", m.Name)
		switch m.Name {
		case "collection":
			s, ok := m.Value.(string)
			if !ok {
				return nil, refuse(CodeType, at, "collection is a string, not "+describe(m.Value))
			}
			if err := checkCollection(s, at, proposal); err != nil {
				return nil, err
			}
			q.Collection, seenCollection = s, true
		case "where":
			n, err := p.filter(m.Value, at, 1)
			if err != nil {
				return nil, err
			}
			q.where, q.whereV = n, m.Value
		case "order", "limit", "cursor":
			if proposal {
				return nil, refuse(CodeProposal, at, "a proposal's query is { collection, where? } and nothing else (06 §2.11)")
			}
			q.paging = append(q.paging, m.Name)
			if err := q.paging1(m.Name, m.Value, at); err != nil {
				return nil, err
			}
		default:
			code, msg := CodeUnknown, "a query's members are collection, where, order, limit and cursor"
			if proposal {
				code, msg = CodeProposal, "a proposal's query is { collection, where? } and nothing else (06 §2.11)"
			}
			return nil, refuse(code, at, msg)
		}
	}
	if !seenCollection {
		return nil, refuse(CodeMissing, "collection", "a query names its collection")
	}
	q.hasMe = p.hasMe
	return q, nil
}

func checkCollection(s, at string, proposal bool) error {
	if proposal {
		if record.IsSys(s) {
			return refuse(CodeNotProposal, at, "a proposal's collection does not start with sys. (06 §2.11)")
		}
		if !collection.ValidName(s) {
			return refuse(CodeCollection, at, "a collection name is lower case with at least one dot, ^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)+$ (02 §6.1)")
		}
		return nil
	}
	if s == "" || len(s) > collectionMax {
		return refuse(CodeCollection, at, "a collection is named by 1 to 256 bytes")
	}
	return nil
}

// paging1 reads order, limit or cursor.
func (q *Query) paging1(name string, v any, at string) error {
	switch name {
	case "limit":
		f, ok := v.(float64)
		if !ok {
			return refuse(CodeType, at, "limit is a number, not "+describe(v))
		}
		if f != float64(int(f)) || f < 1 || f > MaxLimit {
			return refuse(CodeBounds, at, "limit is a whole number from 1 to 1000")
		}
		q.Limit = int(f)
	case "cursor":
		s, ok := v.(string)
		if !ok {
			return refuse(CodeType, at, "cursor is a string, a page's next, not "+describe(v))
		}
		if _, _, err := decodeCursor(s); err != nil {
			return refuse(CodeCursor, at, err.Error())
		}
		q.Cursor = s
	case "order":
		o, ok := v.(*canonical.Object)
		if !ok {
			return refuse(CodeType, at, `order is an object { "by": …, "dir": "asc" | "desc" }, not `+describe(v))
		}
		by := false
		for _, m := range o.Members {
			mat := member(at, m.Name)
			switch m.Name {
			case "by":
				s, ok := m.Value.(string)
				if !ok {
					return refuse(CodeType, mat, "by is a string, not "+describe(m.Value))
				}
				a, err := parseAttr(s, mat)
				if err != nil {
					return err
				}
				if a.kind != attrField && a.kind != attrCreatedAt && a.kind != attrKey {
					return refuse(CodeOrder, mat, "a query is ordered by @createdAt, @key or a body field, not "+s)
				}
				q.Order.By, q.Order.attr, by = s, a, true
			case "dir":
				s, _ := m.Value.(string)
				if s != "asc" && s != "desc" {
					return refuse(CodeOrder, mat, `dir is "asc" or "desc", not `+describe(m.Value))
				}
				q.Order.Desc = s == "desc"
			default:
				return refuse(CodeUnknown, mat, "an order's members are by and dir")
			}
		}
		if !by {
			return refuse(CodeMissing, member(at, "by"), "an order names what it is by")
		}
	}
	return nil
}

// bound is a query made ready to run for one account: "$me" replaced,
// and the fingerprint its cursors carry.
type bound struct {
	*Query
	where *node
	fp    [16]byte
}

// bind readies q for the account "$me" stands for ("" when none: a query
// naming "$me" is then refused).
func (q *Query) bind(account string) (*bound, error) {
	if q.hasMe && account == "" {
		return nil, refuse(CodeMe, "where", `"$me" stands for the account, and no account was given`)
	}
	if !q.hasMe {
		q.fpOnce.Do(func() { q.fp, q.fpErr = q.fingerprint("") })
		return &bound{Query: q, where: q.where, fp: q.fp}, q.fpErr
	}
	fp, err := q.fingerprint(account)
	return &bound{Query: q, where: q.where.bind(account), fp: fp}, err
}

// fingerprint names the query's results for its cursors: collection,
// where, order and, when "$me" is used, the account.
func (q *Query) fingerprint(account string) ([16]byte, error) {
	var fp [16]byte
	h := sha256.New()
	write := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	write("minca/index/query/v1")
	write(q.Collection)
	if q.whereV != nil {
		w, err := canonical.Marshal(q.whereV)
		if err != nil {
			return fp, err
		}
		write(string(w))
	}
	write(q.Order.By)
	if q.Order.Desc {
		write("desc")
	}
	if q.hasMe {
		write(account)
	}
	copy(fp[:], h.Sum(nil))
	return fp, nil
}

// live refuses a query with paging members for a live query.
func (q *Query) live() error {
	if len(q.paging) > 0 {
		return refuse(CodeLive, q.paging[0], "a live query is { collection, where? }: it has no order, limit or cursor")
	}
	return nil
}
