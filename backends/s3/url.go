package s3

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minca-go/minca/engine"
)

// Location is where a store lives, as its URL names it:
//
//	s3://BUCKET/PREFIX?endpoint=URL&region=R&path-style=true&checksum=when_required&timeout=30s&connect-timeout=30s
//
// endpoint, region and path-style default to the AWS configuration (the
// environment and ~/.aws files); checksum is when_supported (the SDK's
// default: CRC32 on every upload) or when_required (only where an
// operation needs one, for S3-compatible servers that reject the headers,
// catalog S6). timeout and connect-timeout are Go durations, the defaults
// of [Options.Timeout] and [Options.ConnectTimeout].
type Location struct {
	Bucket         string
	Prefix         string // "" or ends in "/"
	Endpoint       string
	Region         string
	PathStyle      bool
	Checksum       string        // "", "when_supported" or "when_required"
	Timeout        time.Duration // 0: not given
	ConnectTimeout time.Duration // 0: not given
}

// ParseURL reads an s3:// store URL.
func ParseURL(raw string) (Location, error) {
	var l Location
	u, err := url.Parse(raw)
	if err != nil {
		return l, fmt.Errorf("minca/s3: %q: %w", raw, err)
	}
	if u.Scheme != "s3" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return l, fmt.Errorf("minca/s3: %q: want s3://BUCKET/PREFIX?endpoint=…&region=…", raw)
	}
	l.Bucket = u.Host
	l.Prefix = strings.Trim(u.Path, "/")
	if l.Prefix != "" {
		if !engine.ValidBlobName(l.Prefix) {
			return l, fmt.Errorf("minca/s3: %q: the prefix must be components of [a-z0-9.-] joined by /", raw)
		}
		l.Prefix += "/"
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return l, fmt.Errorf("minca/s3: %q: endpoint must be an http(s) URL", raw)
			}
			l.Endpoint = v
		case "region":
			l.Region = v
		case "path-style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return l, fmt.Errorf("minca/s3: %q: path-style must be true or false", raw)
			}
			l.PathStyle = b
		case "checksum":
			if v != "when_supported" && v != "when_required" {
				return l, fmt.Errorf("minca/s3: %q: checksum must be when_supported or when_required", raw)
			}
			l.Checksum = v
		case "timeout", "connect-timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return l, fmt.Errorf("minca/s3: %q: %s must be a positive duration such as 30s", raw, k)
			}
			if k == "timeout" {
				l.Timeout = d
			} else {
				l.ConnectTimeout = d
			}
		default:
			return l, fmt.Errorf("minca/s3: %q: unknown parameter %q", raw, k)
		}
	}
	return l, nil
}

// String is the location as a URL.
func (l Location) String() string {
	u := url.URL{Scheme: "s3", Host: l.Bucket, Path: "/" + strings.TrimSuffix(l.Prefix, "/")}
	q := url.Values{}
	if l.Endpoint != "" {
		q.Set("endpoint", l.Endpoint)
	}
	if l.Region != "" {
		q.Set("region", l.Region)
	}
	if l.PathStyle {
		q.Set("path-style", "true")
	}
	if l.Checksum != "" {
		q.Set("checksum", l.Checksum)
	}
	if l.Timeout != 0 {
		q.Set("timeout", l.Timeout.String())
	}
	if l.ConnectTimeout != 0 {
		q.Set("connect-timeout", l.ConnectTimeout.String())
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Locate is where the store is, in one canonical form, for a store that
// mirrors to it to remember which blob store it found there
// ([engine.BlobLocator]): s3://BUCKET/PREFIX, followed by ?endpoint=URL
// for an S3-compatible server. Two URLs that reach the same objects give
// the same string; what changes how they are reached and not which objects
// they are — region, path-style, checksum, timeouts, credentials in the
// endpoint, the endpoint's default port, letter case or trailing slash —
// is left out. (On AWS a bucket name is global: the region is not part of
// where a bucket is.)
func (l Location) Locate() string {
	s := l.name()
	if l.Endpoint == "" {
		return s
	}
	u, err := url.Parse(l.Endpoint)
	if err != nil { // ParseURL accepted it; keep it as given
		return s + "?endpoint=" + l.Endpoint
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	ep := &url.URL{Scheme: scheme, Host: host, Path: strings.TrimRight(u.Path, "/")}
	switch {
	case port != "":
		ep.Host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"): // an IPv6 address
		ep.Host = "[" + host + "]"
	}
	return s + "?endpoint=" + ep.String()
}

// name is the bucket and prefix alone: what errors name the store by
// (the endpoint, where it matters, is in the error itself).
func (l Location) name() string {
	return "s3://" + l.Bucket + "/" + strings.TrimSuffix(l.Prefix, "/")
}
