package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/minca-go/minca/node/api"
)

// serveTCP serves the fixture's node on a loopback port with o.
func serveTCP(t *testing.T, f *fixture, o *api.Options) string {
	t.Helper()
	s, err := api.New(f.n, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, url, err := api.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, url) }()
	t.Cleanup(func() { cancel(); <-done })
	return url
}

// The API answers only requests for a loopback host name (or one
// configured): a web page whose name was rebound to 127.0.0.1 gets
// nothing, token or not.
func TestAPIRefusesForeignHost(t *testing.T) {
	f := newFixture(t)
	url := serveTCP(t, f, &api.Options{Hosts: []string{"node.lan"}})
	for host, want := range map[string]int{"evil.example": http.StatusMisdirectedRequest, "evil.example:7465": http.StatusMisdirectedRequest,
		"127.0.0.1": http.StatusOK, "localhost:7465": http.StatusOK, "node.lan": http.StatusOK} {
		req, _ := http.NewRequest("GET", url+"/v1/node", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+f.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// Kept-alive connections that each got one 401 are closed after the idle
// time, and past MaxConns new ones are closed at once: a flood of them
// never takes the process's file descriptors, and the node's own client
// is served after it.
func TestAPIIdleConnectionsClosed(t *testing.T) {
	f := newFixture(t)
	url := serveTCP(t, f, &api.Options{IdleTimeout: 3 * time.Second, MaxConns: 20})
	addr := url[len("http://"):]
	var held []net.Conn
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /v1/node HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("answered %d", resp.StatusCode)
		}
		held = append(held, c)
	}
	if len(held) != 20 {
		t.Fatalf("%d of 40 connections served at once, want 20", len(held))
	}
	for i, c := range held {
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("connection %d still open after the idle time: %v", i, err)
		}
	}
	if st, b := get(t, url+"/v1/node", f.token); st != http.StatusOK {
		t.Fatalf("the node's own client after the flood: %d %s", st, b)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := make([]byte, 512)
	n, _ := resp.Body.Read(b)
	return resp.StatusCode, string(b[:n])
}
