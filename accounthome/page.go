package accounthome

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/minca-go/minca/connect"
)

// pageData is what the connect page shows.
type pageData struct {
	Account string // the account's DID
	Name    string // the account's name
	Days    int    // how long a note granted lasts
	Start   bool   // no exchange yet: the page reads its code
	Code    *codeView
	Request *requestView
	Check   string // the check, spaced for reading: "123 456"
}

// page serves /connect: with no exchange, a page that reads the code
// from its address (06 §3: the fragment never reaches a server) and
// starts one; with ?code=ID, where that exchange stands, and Allow and
// Deny once a program asked; with ?request=ID, an app's request.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	d := pageData{Account: s.o.Account.DID(), Name: s.o.Name, Days: s.days()}
	switch {
	case r.URL.Query().Has("code"):
		e := s.exchange(r.URL.Query().Get("code"))
		if e == nil {
			http.Error(w, "no such exchange at this home (it ended a while ago?): start again from the program", http.StatusNotFound)
			return
		}
		v := e.view()
		d.Code = &v
		if len(v.Check) == 6 {
			d.Check = v.Check[:3] + " " + v.Check[3:]
		}
	case r.URL.Query().Has("request"):
		a := s.request(r.URL.Query().Get("request"))
		if a == nil {
			http.Error(w, "no such request at this home", http.StatusNotFound)
			return
		}
		v := a.view()
		d.Request = &v
	default:
		d.Start = true
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'")
	if err := pageTemplate.Execute(w, d); err != nil {
		s.log.Warn("the connect page", "err", err)
	}
}

// days is how long a note this home grants lasts, as the page says it.
func (s *Server) days() int {
	if s.o.Days > 0 {
		return s.o.Days
	}
	return connect.DefaultDays
}

var pageTemplate = template.Must(template.New("connect").Funcs(template.FuncMap{
	"short": func(did string) string {
		if len(did) > 24 {
			return did[:16] + "…" + did[len(did)-6:]
		}
		return did
	},
	"upper": strings.ToUpper,
}).Parse(pageHTML))

const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Minca · Connect</title>
<style>
  :root { color-scheme: light; --ink: #1d2330; --muted: #5d6677; --line: #dfe3ea; --accent: #2357d9; --bg: #f4f6f9; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--bg); }
  main { max-width: 30rem; margin: 3rem auto; padding: 2rem; background: #fff; border: 1px solid var(--line); border-radius: 14px; box-shadow: 0 6px 24px rgba(20, 30, 60, .06); }
  header { display: flex; align-items: center; gap: .6rem; margin-bottom: 1.4rem; color: var(--muted); font-size: .9rem; }
  .logo { width: 1.6rem; height: 1.6rem; border-radius: 50%; background: linear-gradient(135deg, #2357d9, #58a6ff); }
  h1 { font-size: 1.35rem; margin: 0 0 .8rem; }
  p { margin: .5rem 0; }
  .muted { color: var(--muted); font-size: .9rem; }
  .program { font-weight: 600; }
  ul.asks { margin: .8rem 0; padding-left: 1.2rem; }
  .check { margin: 1.2rem 0; padding: 1rem; text-align: center; background: var(--bg); border-radius: 10px; }
  .check .digits { font: 600 2.2rem/1.2 ui-monospace, "SF Mono", Menlo, Consolas, monospace; letter-spacing: .15em; }
  .buttons { display: flex; gap: .8rem; margin-top: 1.4rem; }
  button { flex: 1; font: inherit; font-weight: 600; padding: .7rem 1rem; border-radius: 10px; border: 1px solid var(--line); background: #fff; color: var(--ink); cursor: pointer; }
  button.allow { background: var(--accent); border-color: var(--accent); color: #fff; }
  code { font-size: .85rem; word-break: break-all; }
  code.key { white-space: nowrap; word-break: normal; }
  footer { margin-top: 1.6rem; padding-top: 1rem; border-top: 1px solid var(--line); font-size: .85rem; color: var(--muted); }
  a { color: var(--accent); }
</style>
</head>
<body>
<main>
<header><span class="logo"></span><span>Minca account home · {{if .Name}}{{.Name}}{{else}}your account{{end}}</span></header>
{{if .Start}}
  <h1 id="title">Connecting…</h1>
  <p id="status" class="muted">Reading the code the program gave this page.</p>
  <script>
  (function () {
    var m = /mc_[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])/.exec(location.hash);
    var say = function (t, s) { document.getElementById('title').textContent = t; document.getElementById('status').textContent = s; };
    if (!m) { say('Nothing to connect', 'Open this page from the link a program shows when it connects (minca connect).'); return; }
    history.replaceState(null, '', '/connect');
    fetch('/connect/code', { method: 'POST', body: new URLSearchParams({ code: m[0] }) })
      .then(function (r) { return r.json(); })
      .then(function (j) { if (j.id) { location.replace('/connect?code=' + encodeURIComponent(j.id)); } else { say('Cannot connect', j.message || 'The home refused the code.'); } })
      .catch(function (e) { say('Cannot connect', String(e)); });
  })();
  </script>
{{else if .Code}}{{with .Code}}
  {{if eq .State "waiting"}}
    <h1>Waiting for the program…</h1>
    <p class="muted">The program that opened this page is meeting the home on the relay.</p>
  {{else if eq .State "asked"}}
    <h1>Connect <span class="program" id="program">{{if .Name}}{{.Name}}{{else}}a program{{end}}</span>?</h1>
    <p class="muted">This is the name the program gives itself; nothing vouches for it.</p>
    <p>It asks to:</p>
    <ul class="asks">
      <li>read and write <strong>records</strong> in every space of your account,</li>
      <li>for <strong>{{$.Days}} days</strong>.</li>
    </ul>
    <p class="muted">It cannot change who is in a space, define collections, or touch your account's own spaces. You can disconnect it at any time. It signs with its own key, <code class="key" title="{{.Audience}}">{{short .Audience}}</code>.</p>
    <div class="check"><div class="muted">The program will ask you for this check</div><div class="digits" id="check">{{$.Check}}</div></div>
    {{if .Problem}}<p class="muted">{{.Problem}}</p>{{end}}
    <form method="post" action="/connect/code/{{.ID}}" class="buttons">
      <button type="submit" name="decision" value="deny" id="deny">Deny</button>
      <button type="submit" name="decision" value="allow" id="allow" class="allow">Allow</button>
    </form>
  {{else if eq .State "answered"}}
    <h1>Allowed</h1>
    <p>Give <span class="program">{{if .Name}}{{.Name}}{{else}}the program{{end}}</span> this check when it asks:</p>
    <div class="check"><div class="digits" id="check">{{$.Check}}</div></div>
    <p class="muted">It keeps its note only once you type the check in it.</p>
  {{else if eq .State "done"}}
    <h1 id="done">Connected</h1>
    <p><span class="program">{{if .Name}}{{.Name}}{{else}}The program{{end}}</span> now writes records for your account. <a href="/connections">Your connections</a></p>
  {{else if eq .State "denied"}}
    <h1>Not connected</h1>
    <p>The program was told no.{{if .Problem}} {{.Problem}}{{end}}</p>
  {{else if eq .State "nobody"}}
    <h1>Nobody is waiting</h1>
    <p>{{.Problem}}</p>
  {{else}}
    <h1>Not connected</h1>
    <p>{{.Problem}}</p>
  {{end}}
  {{if or (eq .State "waiting") (eq .State "answered")}}
  <script>
  (function () {
    var id = {{.ID}}, state = {{.State}};
    setInterval(function () {
      fetch('/connect/code/' + encodeURIComponent(id)).then(function (r) { return r.json(); })
        .then(function (j) { if (j.state !== state) { location.reload(); } });
    }, 700);
  })();
  </script>
  {{end}}
{{end}}{{else if .Request}}{{with .Request}}
  {{if eq .State "waiting"}}
    <h1>Connect <span class="program">{{if .Name}}{{.Name}}{{else}}an app{{end}}</span>?</h1>
    {{if eq .Access "carry"}}<p>The carrier at <strong id="origin">{{.Origin}}</strong> asks to carry your account: to keep its spaces online and backed up, without being able to read its private spaces.</p>{{else}}
    <p>The app at <strong id="origin">{{.Origin}}</strong> asks to {{if eq .Access "read"}}read{{else}}read and write{{end}} {{if .RecordsOnly}}records{{else}}everything{{end}} in {{if eq .Scope "account"}}every space of your account{{else}}{{if .Create}}the new spaces {{range $i, $n := .Create}}{{if $i}}, {{end}}“{{$n}}”{{end}}{{else}}no space yet{{end}}{{end}}, for {{.Days}} days.</p>{{end}}
    <p class="muted">The name is the app's own; the address is what your browser saw.</p>
    <form method="post" action="/connect/request/{{.ID}}" class="buttons">
      <button type="submit" name="decision" value="deny" id="deny">Deny</button>
      <button type="submit" name="decision" value="allow" id="allow" class="allow">Allow</button>
    </form>
  {{else if eq .State "granted"}}
    <h1>Allowed</h1><p>The app at {{.Origin}} is connected. <a href="/connections">Your connections</a></p>
  {{else}}
    <h1>Not connected</h1><p>{{.Problem}}</p>
  {{end}}
{{end}}{{end}}
<footer>Account <code title="{{.Account}}">{{short .Account}}</code> · <a href="/connections">Connections</a></footer>
</main>
</body>
</html>
`
