package connect

import (
	"net/url"
	"strconv"
	"strings"
)

// MaxOriginLen bounds an origin a home says it lives at (06 §3, code:home).
const MaxOriginLen = 200

// ParseOrigin checks that s is a serialized origin, as a browser writes
// one (06 §3: "a serialized origin such as https://home.example"): http or
// https, "://", a lowercase ASCII host (a name, an IPv4 address or a
// bracketed IPv6 address) and a port only when it is not the scheme's
// default; no user, path, query or fragment; at most 200 bytes. Origins
// compare as strings, so one origin has one text.
func ParseOrigin(s string) (string, error) {
	bad := func(msg string) (string, error) {
		return "", refuse(CodeCodeOrigin, "origin", "not a serialized origin: "+msg)
	}
	if len(s) > MaxOriginLen {
		return bad("longer than 200 bytes")
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad(err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("the scheme is http or https")
	}
	if u.User != nil || u.Opaque != "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.HasSuffix(s, "#") {
		return bad("an origin is scheme://host[:port] and nothing more")
	}
	o, err := originOf(u)
	if err != nil {
		return bad(err.Error())
	}
	if o != s {
		return bad("its one form is " + strconv.Quote(o))
	}
	return s, nil
}

// originOf serializes u's origin: scheme://host[:port], the host in
// lowercase, the default port left out.
func originOf(u *url.URL) (string, error) {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", refuse(CodeCodeOrigin, "origin", "no host")
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':') {
			return "", refuse(CodeCodeOrigin, "origin", "the host is ASCII letters, digits, dots, hyphens, or a bracketed IPv6 address")
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", refuse(CodeCodeOrigin, "origin", "the port is a number 1–65535")
		}
		if u.Scheme == "https" && n == 443 || u.Scheme == "http" && n == 80 {
			port = ""
		}
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, nil
}

// ConnectPage reads what a person typed for their account home and returns
// the connect page to open and that page's origin (06 §2.2). A bare domain
// is https: "minca.example.com" → https://minca.example.com/connect. An
// address with no path, or "/", gets "/connect"; one with a path is that
// page. A query or fragment typed is dropped: the fragment is where the
// code goes.
func ConnectPage(typed string) (page, origin string, err error) {
	s := strings.TrimSpace(typed)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, perr := url.Parse(s)
	if perr != nil || u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Opaque != "" {
		return "", "", refuse(CodeCodeOrigin, "home", "not the address of an account home: "+strconv.Quote(typed)+" (06 §2.2)")
	}
	origin, err = originOf(u)
	if err != nil {
		return "", "", err
	}
	path := u.EscapedPath()
	if path == "" || path == "/" {
		path = "/connect"
	}
	return origin + path, origin, nil
}
