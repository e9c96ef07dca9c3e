package seal

import "github.com/minca-go/minca/canonical"

// InviteKey is what an invite to a private space carries of its keys (06
// §1.3, §4.3; docs/private-spaces.md, Invites): the key in use when the
// invite was made, {"keyId", "key"}. The joining member offers it to its
// ring; once the key change that made it arrives, every earlier key comes
// with it, so everything ever sealed in the space is readable. An invite
// carries one key, never the chain: the chain is in the space.
type InviteKey struct {
	Key *Key
}

// Object is the invite's key member.
func (i InviteKey) Object() *canonical.Object {
	return canonical.NewObject("keyId", i.Key.id, "key", i.Key.Text())
}

// ParseInviteKey reads an invite's key: exactly keyId and key, the key
// being the one keyId names.
func ParseInviteKey(v any) (*Key, error) {
	o, ok := v.(*canonical.Object)
	if !ok || o.Len() != 2 {
		return nil, fail(ErrMalformed, CodeInviteKey, "key", "an invite's key is an object of exactly keyId and key")
	}
	iv, _ := o.Get("keyId")
	kv, _ := o.Get("key")
	id, ok1 := iv.(string)
	ks, ok2 := kv.(string)
	if !ok1 || !ok2 {
		return nil, fail(ErrMalformed, CodeInviteKey, "key", "an invite's key is an object of exactly keyId and key, both strings")
	}
	k, err := ParseKey(ks)
	if err != nil {
		return nil, fail(ErrMalformed, CodeInviteKey, "key.key", "key is 32 bytes of base64url without padding")
	}
	if k.id != id {
		return nil, fail(ErrMalformed, CodeKeyID, "key.keyId", "the key is "+k.id+", not "+id+" as the invite says")
	}
	return k, nil
}
