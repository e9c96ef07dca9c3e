package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"strconv"
)

// The envelope (docs/private-spaces.md, The envelope):
//
//	envelope = 0x01 ‖ salt (16) ‖ nonce (12) ‖ AES-256-GCM(subkey, nonce, plaintext, ad) (ciphertext ‖ 16-byte tag)
//	subkey   = HKDF-SHA-256(IKM = K, salt, info = "minca/seal/v1", L = 32)
//
// A sealer picks a random salt once and seals many envelopes under its
// subkey, each with a random nonce, and picks a new salt after
// maxPerSubkey of them: no nonce pair is ever likely to repeat under one
// subkey, and no subkey is likely to repeat under one key, however many
// envelopes every member seals together.
const (
	format       = 0x01
	saltLen      = 16
	nonceLen     = 12
	tagLen       = 16
	headerLen    = 1 + saltLen + nonceLen
	Overhead     = headerLen + tagLen // bytes an envelope adds to its plaintext
	maxPerSubkey = 1 << 24            // envelopes one subkey seals before a new salt
	maxOpened    = 1024               // subkeys a key keeps for opening
)

// Purposes an envelope is sealed for, the second field of its binding.
const (
	PurposeBody    = "body"    // a version's body and links (02 §5.1)
	PurposeFile    = "file"    // a file a version names (02 §3.1 files)
	PurposeEarlier = "earlier" // a key change's earlier keys (02 §7.3)
)

const adLabel = "minca/seal/v1"

// Binding is what an envelope is bound to, as its associated data: it
// opens only under the same binding (docs/private-spaces.md, Binding).
// Purpose is one of PurposeBody, PurposeFile, PurposeEarlier; Collection
// and Key name the record for a body and are empty otherwise.
type Binding struct {
	Purpose    string
	Space      string
	Collection string
	Key        string
}

// BodyBinding binds a body to its record: the space, collection and key
// its version names, which every version of the record shares.
func BodyBinding(space, collection, key string) Binding {
	return Binding{Purpose: PurposeBody, Space: space, Collection: collection, Key: key}
}

// ad is the associated data of an envelope under the key named keyID:
// each of label, purpose, keyId, space, collection, key as a 4-byte
// big-endian length and its UTF-8 bytes.
func (b Binding) ad(keyID string) []byte { return b.appendAD(nil, keyID) }

// appendAD appends [Binding.ad] to dst.
func (b Binding) appendAD(dst []byte, keyID string) []byte {
	for _, f := range [...]string{adLabel, b.Purpose, keyID, b.Space, b.Collection, b.Key} {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f)))
		dst = append(dst, f...)
	}
	return dst
}

// adBuf is the binding's associated data under k in a buffer of k's, to
// be put back once used: sealing and opening allocate nothing for it.
func (k *Key) adBuf(b Binding) *[]byte {
	buf, _ := k.ads.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	*buf = b.appendAD((*buf)[:0], k.id)
	return buf
}

// Seal seals plaintext under k for binding: an envelope of
// len(plaintext)+Overhead bytes, appended to dst.
func (k *Key) Seal(dst, plaintext []byte, b Binding) []byte {
	ad := k.adBuf(b)
	dst = sealWith(dst, k.currentSubkey(), nil, plaintext, *ad)
	k.ads.Put(ad)
	return dst
}

// sealWith appends the envelope; a nil nonce is a random one, made in
// place in dst.
func sealWith(dst []byte, sk *subkey, nonce []byte, plaintext, ad []byte) []byte {
	n := len(dst)
	dst = append(dst, format)
	dst = append(dst, sk.salt[:]...)
	if nonce == nil {
		dst = append(dst, make([]byte, nonceLen)...)
		rand.Read(dst[n+1+saltLen:])
	} else {
		dst = append(dst, nonce...)
	}
	return sk.aead.Seal(dst, dst[n+1+saltLen:n+headerLen], plaintext, ad)
}

// currentSubkey is the subkey this key seals under, new after
// maxPerSubkey envelopes.
func (k *Key) currentSubkey() *subkey {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sealer == nil || k.sealer.count >= maxPerSubkey {
		var salt [saltLen]byte
		rand.Read(salt[:])
		k.sealer = k.newSubkey(salt)
	}
	k.sealer.count++
	return k.sealer
}

func (k *Key) newSubkey(salt [saltLen]byte) *subkey {
	sk := derive(k.b[:], salt[:], infoSeal)
	block, err := aes.NewCipher(sk[:])
	if err != nil {
		panic("minca/seal: aes: " + err.Error()) // a 32-byte key never fails
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("minca/seal: gcm: " + err.Error())
	}
	return &subkey{salt: salt, aead: aead}
}

// openSubkey is the subkey of salt, kept for the next envelope under it.
func (k *Key) openSubkey(salt [saltLen]byte) *subkey {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sealer != nil && k.sealer.salt == salt {
		return k.sealer
	}
	if sk, ok := k.opened[salt]; ok {
		return sk
	}
	if k.opened == nil || len(k.opened) >= maxOpened {
		k.opened = map[[saltLen]byte]*subkey{}
	}
	sk := k.newSubkey(salt)
	k.opened[salt] = sk
	return sk
}

// Open opens an envelope sealed under k for binding and appends its
// plaintext to dst. An envelope too short or of another format is
// ErrMalformed; one that does not authenticate — changed, truncated past
// its header, sealed under another key or for another binding — is
// ErrOpen, and nothing of it is returned. field names the input in errors.
func (k *Key) Open(dst, envelope []byte, b Binding, field string) ([]byte, error) {
	if len(envelope) < Overhead {
		return nil, fail(ErrMalformed, CodeShape, field, "an envelope is at least "+strconv.Itoa(Overhead)+" bytes (format, salt, nonce, tag), got "+strconv.Itoa(len(envelope)))
	}
	if envelope[0] != format {
		return nil, fail(ErrMalformed, CodeShape, field, "an envelope's format byte is 0x01, got "+strconv.Itoa(int(envelope[0])))
	}
	sk := k.openSubkey([saltLen]byte(envelope[1 : 1+saltLen]))
	ad := k.adBuf(b)
	out, err := sk.aead.Open(dst, envelope[1+saltLen:headerLen], envelope[headerLen:], *ad)
	k.ads.Put(ad)
	if err != nil {
		return nil, fail(ErrOpen, CodeOpen, field, "the envelope does not open under "+k.id+" for this "+b.Purpose+": it was changed, or sealed for another record, space or key")
	}
	return out, nil
}
