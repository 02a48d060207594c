package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"certctl-loadtest/internal/syncbuf"
	"certctl-loadtest/internal/testbed"
)

// Runner performs one run. Everything that touches the outside world is a field, so tests can replace it.
type Runner struct {
	Cfg     Config
	Exec    Executor
	Env     []string
	Stdout  io.Writer
	Stderr  io.Writer
	Now     func() time.Time
	Command string // how to repeat the run, for run.json
	// Settings are the knobs in force (InForce): run.json keeps them, compare sets two sides' apart.
	Settings []Setting
	Harness  string // this harness's revision, for run.json
	// Owner owns the run directory and everything in it, k6's records included (k6 runs as this user):
	// the invoking user, also when the harness runs as root through sudo.
	Owner Owner
	// Created is set once the run's directory exists: from then on it holds a summary.
	Created bool
	// Calibrate measures the machine before the stack starts (testbed.Measure), timing fdatasync in
	// fsyncDir; nil: the run records no testbed (the unit tests).
	Calibrate func(ctx context.Context, fsyncDir string) testbed.Calibration
	// HTTPGet reads a URL on the stack's network (k6's REST API, for the progress lines); nil: net/http.
	HTTPGet func(ctx context.Context, url string) ([]byte, error)

	// Built are the images of ours this invocation has built (nil: each run builds its own): a command
	// that starts many stacks builds each image once.
	Built *OwnBuilds

	console sync.Mutex // one line at a time on Stderr, from the k6 processes and the harness alike
	// buildLog is what building our images printed: the run directory's build.log, not the console.
	buildLog syncbuf.Buffer

	statsOnce   sync.Once
	statsClient *http.Client // the progress lines' reads of k6's REST API
}

// OwnBuilds are the images of ours one invocation of the harness has built: a tier's scenarios one
// after another, capacity's steps or compare's runs each start a stack, and each image is built for the
// first only. Runners side by side wait for one build rather than build an image twice.
type OwnBuilds struct {
	mu    sync.Mutex
	built map[string]bool // image → built (or found up to date) in this invocation
	// dists are the certctl builds packaged in this invocation, each with what packaging said of it
	// (CERTCTL_IMAGE=…, CERTCTL_AGENT_IMAGE=…).
	dists map[string][]string
}

func (r *Runner) logf(format string, a ...any) {
	r.console.Lock()
	defer r.console.Unlock()
	fmt.Fprintf(r.Stderr, "loadtest: "+format+"\n", a...)
}
