package browser_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// devtools is a headless Chromium driven over the DevTools protocol, for what a dumped DOM and a
// screenshot of the window cannot tell: whether a chart's canvas has anything drawn on it, whether the
// cursor moves on every chart at once. It talks over a pipe (--remote-debugging-pipe: the browser reads
// NUL-terminated JSON commands on its fd 3 and answers on its fd 4), which needs no library, no port
// and no WebSocket.
type devtools struct {
	t        *testing.T
	cmd      *exec.Cmd
	commands *os.File
	messages chan cdpMessage
	stderr   lockedBuffer
	next     int
	// session is the page's (Target.attachToTarget, flattened): commands for the page carry it.
	session string
	// events are what the page reported while a command was under way, in order.
	events []cdpMessage
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// cdpTimeout bounds every wait on the browser: a page that never loads fails the test, not the run.
const cdpTimeout = 60 * time.Second

func startDevtools(t *testing.T, chromium string) *devtools {
	t.Helper()
	tmp := t.TempDir()
	theirIn, ourOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourIn, theirOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &devtools{t: t, commands: ourOut, messages: make(chan cdpMessage, 256)}
	d.cmd = exec.Command(chromium,
		"--headless=new", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+filepath.Join(tmp, "profile"), "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--host-resolver-rules=MAP * ~NOTFOUND",
		fmt.Sprintf("--window-size=%d,%d", width, height),
		"--remote-debugging-pipe", "about:blank")
	d.cmd.ExtraFiles = []*os.File{theirIn, theirOut} // fd 3, fd 4
	d.cmd.Stderr = &d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", d.cmd, err)
	}
	theirIn.Close()
	theirOut.Close()
	go func() {
		defer close(d.messages)
		r := bufio.NewReader(ourIn)
		for {
			b, err := r.ReadBytes(0)
			if err != nil {
				return
			}
			var m cdpMessage
			if json.Unmarshal(bytes.TrimSuffix(b, []byte{0}), &m) == nil {
				d.messages <- m
			}
		}
	}()
	t.Cleanup(func() {
		// Browser.close lets it exit on its own; one that does not within the time is killed.
		d.send("", "Browser.close", nil)
		done := make(chan struct{})
		go func() { d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			d.cmd.Process.Kill()
			<-done
		}
		ourOut.Close()
		ourIn.Close()
	})
	return d
}

func (d *devtools) send(session, method string, params any) int {
	d.next++
	b, _ := json.Marshal(struct {
		ID        int    `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
		SessionID string `json:"sessionId,omitempty"`
	}{d.next, method, params, session})
	d.commands.Write(append(b, 0))
	return d.next
}

// call sends a command (to the page once one is attached) and returns its result, keeping the events
// that came in meanwhile.
func (d *devtools) call(method string, params any) json.RawMessage {
	d.t.Helper()
	session := d.session
	if strings.HasPrefix(method, "Target.") {
		session = ""
	}
	id := d.send(session, method, params)
	for {
		m := d.receive(method)
		if m.ID == id {
			if m.Error != nil {
				d.t.Fatalf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
			}
			return m.Result
		}
		if m.Method != "" {
			d.events = append(d.events, m)
		}
	}
}

// await waits for the page's event called method, keeping the others.
func (d *devtools) await(method string) {
	d.t.Helper()
	for _, e := range d.events {
		if e.Method == method {
			return
		}
	}
	for {
		m := d.receive(method)
		if m.Method != "" {
			d.events = append(d.events, m)
		}
		if m.Method == method {
			return
		}
	}
}

func (d *devtools) receive(waitingFor string) cdpMessage {
	d.t.Helper()
	select {
	case m, ok := <-d.messages:
		if !ok {
			d.t.Fatalf("chromium went away during %s\n%s", waitingFor, tail(d.stderr.String(), 40))
		}
		return m
	case <-time.After(cdpTimeout):
		d.t.Fatalf("chromium did not answer %s within %s\n%s", waitingFor, cdpTimeout, tail(d.stderr.String(), 40))
	}
	return cdpMessage{}
}

// load opens file in a new page of the window's size, and returns once its load event fired.
func (d *devtools) load(file string) {
	d.t.Helper()
	var target struct{ TargetID string }
	json.Unmarshal(d.call("Target.createTarget", map[string]any{"url": "about:blank"}), &target)
	var attached struct{ SessionID string }
	json.Unmarshal(d.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &attached)
	d.session, d.events = attached.SessionID, nil
	for _, domain := range []string{"Page", "Runtime", "Log", "Network"} {
		d.call(domain+".enable", nil)
	}
	d.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false})
	u := &url.URL{Scheme: "file", Path: file}
	d.call("Page.navigate", map[string]any{"url": u.String()})
	d.await("Page.loadEventFired")
}

// eval runs expr in the page (a promise is awaited) and decodes its value into out.
func (d *devtools) eval(expr string, out any) {
	d.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	json.Unmarshal(d.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}), &r)
	if r.ExceptionDetails != nil {
		d.t.Fatalf("evaluating in the page: %s %s", r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			d.t.Fatalf("the page's answer %s: %v", r.Result.Value, err)
		}
	}
}

// complaints are what the page said went wrong: exceptions, console errors and warnings, and the
// browser's own messages about it (a script or a load the page's policy refused).
func (d *devtools) complaints() []string {
	var out []string
	for _, e := range d.events {
		switch e.Method {
		case "Runtime.exceptionThrown":
			var p struct {
				ExceptionDetails struct {
					Text      string
					Exception struct{ Description string }
				}
			}
			json.Unmarshal(e.Params, &p)
			out = append(out, "exception: "+p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string
				Args []struct {
					Value       any
					Description string
				}
			}
			json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				var said []string
				for _, a := range p.Args {
					said = append(said, fmt.Sprint(a.Value)+a.Description)
				}
				out = append(out, "console."+p.Type+": "+strings.Join(said, " "))
			}
		case "Log.entryAdded":
			var p struct {
				Entry struct{ Level, Source, Text string }
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, p.Entry.Source+" "+p.Entry.Level+": "+p.Entry.Text)
			}
		}
	}
	return out
}

// requested are the URLs the page asked for beyond its own file: none leaves the machine (every
// name resolves to nothing) but each is seen.
func (d *devtools) requested() []string {
	var out []string
	for _, e := range d.events {
		if e.Method != "Network.requestWillBeSent" {
			continue
		}
		var p struct{ Request struct{ URL string } }
		json.Unmarshal(e.Params, &p)
		if u, err := url.Parse(p.Request.URL); err != nil || (u.Scheme != "file" && u.Scheme != "data" && u.Scheme != "about") {
			out = append(out, p.Request.URL)
		}
	}
	return out
}

// screenshot is a PNG of the page's area at (x, y) of w × h CSS pixels, below the fold or not.
func (d *devtools) screenshot(x, y, w, h float64) []byte {
	d.t.Helper()
	var r struct{ Data string }
	json.Unmarshal(d.call("Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": x, "y": y, "width": w, "height": h, "scale": 1},
	}), &r)
	b, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil || len(b) == 0 {
		d.t.Fatalf("no screenshot: %v", err)
	}
	return b
}

// mouse moves the mouse to (x, y) of the viewport, as a reader does.
func (d *devtools) mouse(x, y float64) {
	d.t.Helper()
	d.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": x, "y": y})
}

// lockedBuffer is the browser's stderr, written by exec's copier while a failing test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
