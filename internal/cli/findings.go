package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"certctl-loadtest/internal/findings"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// findingsCmd: loadtest findings [--only id,...] runs the reproductions of docs/findings/repro against
// the stack's certctl (or TARGET=external's) and prints their table; --issue ID prints one entry as an
// issue body for certctl and runs nothing.
func findingsCmd(ctx context.Context, e Env, args []string) int {
	m := measure{e, "findings"}
	flags := flag.NewFlagSet("findings", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	issue := flags.String("issue", "", "")
	only := flags.String("only", "", "")
	measure := flags.String("measure", "", "")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return badArgs(e, "findings", "%v", err)
	}
	if len(pos) > 0 {
		return badArgs(e, "findings", "takes no arguments but its flags (got %q)", strings.Join(pos, " "))
	}
	if (*measure != "" && (*issue != "" || *only != "")) || (*issue != "" && *only != "") {
		return m.fail("--only, --issue and --measure each ask for something else: give one")
	}
	cat, err := findings.Load()
	if err != nil {
		m.say("%v", err)
		return results.ExitEnvironment
	}
	if *issue != "" {
		return issueCmd(e, cat, *issue)
	}
	var cost string // a measurement's script (docs/findings/cost/<id>.sh), run instead of the reproductions
	if *measure != "" {
		names, _ := filepath.Glob(filepath.Join(e.Root, findings.CostDir, "*.sh"))
		for i, n := range names {
			names[i] = strings.TrimSuffix(filepath.Base(n), ".sh")
		}
		if !slices.Contains(names, *measure) {
			fmt.Fprintf(e.Stderr, "loadtest: findings --measure: no measurement %q in %s%s\n", *measure, findings.CostDir, suggest(*measure, names))
			return results.ExitBadInput
		}
		cost = filepath.Join(e.Root, findings.CostDir, *measure+".sh")
	}
	ids := cat.IDs()
	if *only != "" {
		ids = nil
		for _, id := range strings.Split(*only, ",") {
			id = strings.TrimSpace(id)
			if _, ok := cat.Find(id); !ok {
				fmt.Fprintf(e.Stderr, "loadtest: findings --only: no finding %q%s\n", id, suggest(id, cat.IDs()))
				return results.ExitBadInput
			}
			ids = append(ids, id)
		}
	}
	responders, err := findings.NeedsResponders(e.Root, ids)
	if err != nil {
		m.say("%v", err)
		return results.ExitEnvironment
	}
	for _, tool := range []string{"bash", "curl", "jq", "openssl", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			m.say("the reproductions need %s on this machine (make deps installs it)", tool)
			return results.ExitEnvironment
		}
	}
	over := map[string]string{"TIER": "api", "SCENARIOS": "", "SEGMENTS": "1", "LOADTEST_GOAL": "findings"}
	if e.Getenv("RUN_ID") == "" {
		over["RUN_ID"] = "findings-" + e.Now().UTC().Format("0102-150405")
	}
	cfg, e2, err := overridden(e, over, "TIER", "SCENARIOS", "SEGMENTS", "LOADTEST_GOAL", "RUN_ID")
	if err != nil {
		return m.fail("%v", err)
	}
	// The relay that lets the host reach certctl and its database (docker-compose.yml: stack-relay), and
	// the PKI tier's challenge responders, fast and slow, that validation-wait-unbounded orders against.
	cfg.Profiles = append(cfg.Profiles, "findings", "pki")
	build := ""
	if cfg.External == nil && cfg.Dist != "" {
		build = filepath.Base(cfg.Dist)
	}
	// Two scripts can judge only what a certctl is started with: a key without :admin (read-only-keys) and a
	// renewal scan within their minute (renewal-scan-window, at certctl's shortest interval).
	viewer := make([]byte, 16)
	if _, err := rand.Read(viewer); err != nil {
		m.say("%v", err)
		return results.ExitEnvironment
	}
	stackEnv := []string{"LT_MORE_KEYS=,findings-viewer:" + hex.EncodeToString(viewer)}
	scriptEnv := []string{"VIEWER_KEY=" + hex.EncodeToString(viewer)}
	if e2.Getenv("CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL") == "" {
		stackEnv = append(stackEnv, "CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL=1m")
		scriptEnv = append(scriptEnv, "RENEWAL_WAIT=75")
	}
	// certctl validates ACME challenges at the responders, which have private addresses on the stack's
	// network: its guard against those (on by the harness's default) is off here, as in the PKI tier.
	// Nothing leaves the network either way (netguard).
	if e2.Getenv("CERTCTL_BLOCK_RFC1918_OUTBOUND") == "" {
		stackEnv = append(stackEnv, "CERTCTL_BLOCK_RFC1918_OUTBOUND=false")
	}
	slowHold := e2.Getenv("CHALLENGE_SLOW_LATENCY")
	if slowHold == "" {
		slowHold = harness.KnobDefault("CHALLENGE_SLOW_LATENCY")
	}
	// The responders' names (docker-compose.yml: their aliases, which Docker's DNS resolves for certctl).
	scriptEnv = append(scriptEnv, "CHALLENGE_FAST_NAME=ch-0.challenge.loadtest.example.com",
		"CHALLENGE_SLOW_NAME=slow-0.challenge.loadtest.example.com", "CHALLENGE_SLOW_HOLD="+slowHold)
	if cfg.External != nil {
		scriptEnv = nil // its keys, scheduler and responders are its own: VIEWER_KEY, RENEWAL_WAIT and CHALLENGE_* come from the caller
	}
	r := e2.runner("findings", cfg, stackEnv...)
	code := r.WithStack(ctx, func(ctx context.Context, dir string, a harness.StackAccess) int {
		if cost != "" {
			return measureCmd(ctx, e, cost, dir, a, scriptEnv)
		}
		env := scriptEnv
		if cfg.External == nil && len(responders) > 0 {
			// The responders are no part of the stack WithStack starts; without them the scripts that order
			// at them say they could not run, and the others run as before.
			if err := a.Compose(ctx, "up", "--detach", "--wait", "--wait-timeout", "60", "challenge-responder", "challenge-slow"); err != nil {
				m.say("the challenge responders did not start (%v): %s cannot run", err, strings.Join(responders, ", "))
			} else {
				env = append(slices.Clip(env), "CHALLENGE_MGMT="+a.Responder)
			}
		}
		t := findings.Target{URL: a.URL, Key: a.Key, CA: a.CAFile, PGURL: a.PGURL, ConnectTo: a.ConnectTo, Build: build, Env: env}
		rep := findings.Run(ctx, cat, e.Root, ids, t, scriptExec, e.Now, e.Stderr)
		fmt.Fprint(e.Stdout, rep.Text())
		if err := rep.Write(dir); err != nil {
			m.say("cannot keep the table in %s: %v", dir, err)
		}
		if len(rep.Unexpected()) > 0 {
			return ExitRegressed
		}
		return results.ExitOK
	})
	if r.Created {
		m.say("exit %d; results in %s", code, cfg.RunDir())
	}
	return code
}

// measureCmd runs one measurement against the stack, its table to the console and to
// <run>/measure-<id>.txt; its exit status is the command's (0, or 2 when it could not measure).
func measureCmd(ctx context.Context, e Env, script, dir string, a harness.StackAccess, env []string) int {
	id := strings.TrimSuffix(filepath.Base(script), ".sh")
	ctx, cancel := context.WithTimeout(ctx, findings.MeasureTimeout)
	defer cancel()
	start := e.Now()
	env = append([]string{"PGURL=" + a.PGURL, "CERTCTL_CONNECT_TO=" + a.ConnectTo}, env...)
	code, out, errb, err := scriptExec(ctx, script, []string{a.URL, a.Key, a.CAFile}, env)
	took := e.Now().Sub(start).Round(time.Second)
	e.Stderr.Write(errb)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: findings --measure %s: %v\n", id, err)
		return results.ExitEnvironment
	}
	fmt.Fprint(e.Stdout, string(out))
	if werr := output.Write(filepath.Join(dir, "measure-"+id+".txt"), out); werr != nil {
		fmt.Fprintf(e.Stderr, "loadtest: findings --measure %s: cannot keep the table: %v\n", id, werr)
	}
	fmt.Fprintf(e.Stderr, "loadtest: findings --measure %s: exit %d after %s\n", id, code, took)
	if code != 0 {
		return results.ExitEnvironment
	}
	return results.ExitOK
}

// issueCmd prints the entry as a GitHub issue body for certctl.
func issueCmd(e Env, cat findings.Catalog, id string) int {
	entry, ok := cat.Find(id)
	if !ok {
		fmt.Fprintf(e.Stderr, "loadtest: findings --issue: no finding %q%s\n", id, suggest(id, cat.IDs()))
		return results.ExitBadInput
	}
	dir := filepath.Join(e.Root, findings.ReproDir)
	script, err := os.ReadFile(filepath.Join(dir, id+".sh"))
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: findings --issue: %v\n", err)
		return results.ExitEnvironment
	}
	lib, err := os.ReadFile(filepath.Join(dir, "lib.sh"))
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: findings --issue: %v\n", err)
		return results.ExitEnvironment
	}
	fmt.Fprint(e.Stdout, findings.IssueBody(cat, entry, findings.Bundle(string(lib), string(script))))
	return results.ExitOK
}

// suggest is " (did you mean X?)" for the closest of names.
func suggest(got string, names []string) string {
	if c := harness.Closest(got, names); c != "" {
		return fmt.Sprintf(" (did you mean %s?)", c)
	}
	return ""
}

// scriptExec runs a reproduction with bash; its exit status is its verdict.
func scriptExec(ctx context.Context, script string, args, env []string) (int, []byte, []byte, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.Bytes(), errb.Bytes(), nil
	}
	if err != nil {
		return -1, out.Bytes(), errb.Bytes(), err
	}
	return 0, out.Bytes(), errb.Bytes(), nil
}
