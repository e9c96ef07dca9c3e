package identity

import "errors"

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var errBase58 = errors.New("not base58btc")

// encodeBase58 writes b in the Bitcoin base58 alphabet (multibase "z").
func encodeBase58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// log(256)/log(58) ≈ 1.37
	out := make([]byte, len(b)*138/100+1)
	high := len(out) - 1
	for _, c := range b[zeros:] {
		carry := int(c)
		j := len(out) - 1
		for ; j > high || carry != 0; j-- {
			carry += 256 * int(out[j])
			out[j] = byte(carry % 58)
			carry /= 58
		}
		high = j
	}
	i := 0
	for i < len(out) && out[i] == 0 {
		i++
	}
	res := make([]byte, zeros+len(out)-i)
	for k := 0; k < zeros; k++ {
		res[k] = '1'
	}
	for k, v := range out[i:] {
		res[zeros+k] = base58Alphabet[v]
	}
	return string(res)
}

// decodeBase58 reads base58btc text. maxLen bounds the decoded size so a
// long input costs nothing before it is refused.
func decodeBase58(s string, maxLen int) ([]byte, error) {
	if len(s) == 0 || len(s) > maxLen*138/100+2 {
		return nil, errBase58
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	out := make([]byte, len(s)) // base58 never decodes longer than its text
	high := len(out) - 1
	for i := zeros; i < len(s); i++ {
		v := base58Value(s[i])
		if v < 0 {
			return nil, errBase58
		}
		carry := v
		j := len(out) - 1
		for ; j > high || carry != 0; j-- {
			carry += 58 * int(out[j])
			out[j] = byte(carry)
			carry >>= 8
		}
		high = j
	}
	i := 0
	for i < len(out) && out[i] == 0 {
		i++
	}
	res := make([]byte, zeros+len(out)-i)
	copy(res[zeros:], out[i:])
	if len(res) > maxLen {
		return nil, errBase58
	}
	return res, nil
}

func base58Value(c byte) int {
	switch {
	case c >= '1' && c <= '9':
		return int(c - '1')
	case c >= 'A' && c <= 'H':
		return int(c-'A') + 9
	case c >= 'J' && c <= 'N':
		return int(c-'J') + 17
	case c >= 'P' && c <= 'Z':
		return int(c-'P') + 22
	case c >= 'a' && c <= 'k':
		return int(c-'a') + 33
	case c >= 'm' && c <= 'z':
		return int(c-'m') + 44
	}
	return -1
}
