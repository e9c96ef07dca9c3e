package collection

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// TagLen is the length of a tag's text: 16 bytes in base64url, 22
// characters (02 §8.3).
const TagLen = 22

// Values returns the values of a topic in a version's content (02 §8.1). A
// field path is followed one segment at a time through objects only; at
// its end a string, boolean or finite number is one value, an array gives
// each element that is one of those, and anything else none. A link role
// gives the to of every link of that role.
func (t Topic) Values(c Content) []any {
	if t.IsLink() {
		var out []any
		for _, l := range c.Links {
			if l.Rel == t.Rel {
				out = append(out, l.To)
			}
		}
		return out
	}
	v := c.Body
	for _, seg := range t.Path {
		o, ok := v.(*canonical.Object)
		if !ok {
			return nil
		}
		if v, ok = o.Get(seg); !ok {
			return nil
		}
	}
	switch x := v.(type) {
	case []any:
		var out []any
		for _, e := range x {
			if scalar(e) {
				out = append(out, e)
			}
		}
		return out
	default:
		if scalar(x) {
			return []any{x}
		}
	}
	return nil
}

func scalar(v any) bool {
	switch x := v.(type) {
	case string, bool:
		return true
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	}
	return false
}

// Tag is one topic tag (02 §8.3): base64url of the first 16 bytes of
// HMAC-SHA-256(tagKey, collection ‖ 0x00 ‖ topic ‖ 0x00 ‖ canonical(value)).
// topic is the string as topics names it ("mentions", "link:channel").
func Tag(k TagKey, collection, topic string, value any) (string, error) {
	b, err := canonical.Marshal(value)
	if err != nil {
		return "", fmt.Errorf("minca/collection: tag value: %w", err)
	}
	mac := hmac.New(sha256.New, k[:])
	mac.Write([]byte(collection))
	mac.Write([]byte{0})
	mac.Write([]byte(topic))
	mac.Write([]byte{0})
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16]), nil
}

// Tags returns the tags a version of this collection with content c must
// carry (02 §8.3): the tag of every value of every topic, each once, sorted
// by UTF-16 code units, the first 64. None gives nil: the version then
// carries no tags member. A delete carries none, whatever its content.
func (d *Definition) Tags(k TagKey, c Content) ([]string, error) {
	return TagsOf(k, d.Name, d.Topics, c)
}

// TagsOf is [Definition.Tags] for a collection and its topics.
func TagsOf(k TagKey, collection string, topics []Topic, c Content) ([]string, error) {
	var out []string
	for _, t := range topics {
		for _, v := range t.Values(c) {
			tag, err := Tag(k, collection, t.String(), v)
			if err != nil {
				return nil, err
			}
			out = append(out, tag)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	slices.SortFunc(out, canonical.CompareUTF16)
	out = slices.Compact(out)
	if len(out) > record.MaxTags {
		out = out[:record.MaxTags]
	}
	return out, nil
}

// SameTags reports whether two lists of tags are the same set, order and
// duplicates ignored (02 §8.4).
func SameTags(a, b []string) bool {
	x := slices.Clone(a)
	y := slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}
