package ciplan

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"certctl-loadtest/internal/cli"
	"certctl-loadtest/internal/harness"
)

// Planner plans a suite's tests: each run's stacks and their load as `loadtest check` does (k6 inspect
// with the run's knobs over the suite's defaults), plus what a stack costs on top of its load.
type Planner struct {
	Root     string
	Defaults []string // the suite's knobs under each run's own
	// Stack is what a stack costs on top of its load, by the tier whose stack it is ("default" for the
	// API stack's tiers); Refused a run refused before its stack; PerTest what the suite pays a test
	// besides its runs (act's job: its container, the harness built in it, the steps).
	Stack            map[string]time.Duration
	Refused, PerTest time.Duration
}

type stackPlan struct {
	loads []time.Duration
	tier  string
}

// Job is one test's runs, as one unit of the schedule.
type Job struct {
	Name          string
	Serial, Alone bool
	Stacks        int
	Load, Took    time.Duration
	Longest       time.Duration // the longest load of one of its stacks
	Start, End    time.Duration
}

// Plan plans each test's runs with the harness's own planner, three runs' k6 inspects at a time.
func (p *Planner) Plan(tests []Test) ([]Job, error) {
	type asked struct {
		env []string
		sub string
		sp  stackPlan
		err error
	}
	var todo []*asked
	byKey := map[string]*asked{}
	key := func(env []string, sub string) string { return sub + "\x00" + strings.Join(env, "\x00") }
	envOf := func(r Run) ([]string, string) {
		sub := "run"
		if strings.HasPrefix(r.Cmd, "loadtest spotcheck") {
			sub = "spotcheck"
		}
		return append(append([]string{}, p.Defaults...), strings.Fields(r.Env)...), sub
	}
	for _, g := range tests {
		for _, r := range g.Runs {
			if r.Refused {
				continue
			}
			env, sub := envOf(r)
			if k := key(env, sub); byKey[k] == nil {
				byKey[k] = &asked{env: env, sub: sub}
				todo = append(todo, byKey[k])
			}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for _, a := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			a.sp.loads, a.sp.tier, a.err = p.stacks(a.env, a.sub)
		}()
	}
	wg.Wait()
	var jobs []Job
	for _, g := range tests {
		j := Job{Name: g.Name, Serial: g.Serial, Alone: g.Alone, Took: p.PerTest}
		for _, r := range g.Runs {
			n := max(r.N, 1)
			if r.Refused {
				j.Took += time.Duration(n) * p.Refused
				continue
			}
			env, sub := envOf(r)
			a := byKey[key(env, sub)]
			if a.err != nil {
				return nil, fmt.Errorf("%s: planning `%s` %s: %v", g.Name, r.Cmd, r.Env, a.err)
			}
			if sizes := effective(env, "GROWTH_SIZES"); strings.HasPrefix(r.Cmd, "loadtest growth") && sizes != "" {
				// A growth sweep is a stack per size.
				n *= len(strings.Split(sizes, ","))
			}
			cost, ok := p.Stack[a.sp.tier]
			if !ok {
				cost = p.Stack["default"]
			}
			for _, l := range a.sp.loads {
				if r.Aborts {
					l = 0
				}
				if r.Measured > 0 {
					l = r.Measured
				}
				j.Stacks += n
				j.Longest = max(j.Longest, l)
				j.Load += time.Duration(n) * l
				j.Took += time.Duration(n) * (cost + l)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func effective(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if x, ok := strings.CutPrefix(kv, key+"="); ok {
			v = x
		}
	}
	return v
}

// stacks asks the harness's planner what a run with env would start: each stack's load, and the tier
// whose stack it is (its cost).
func (p Planner) stacks(env []string, sub string) ([]time.Duration, string, error) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	// No build to read: the plan does not depend on which certctl runs.
	delete(vars, "CERTCTL_DIST")
	// The k6 the suite's runs inspect with (make's K6_BIN): the same plan as go tool k6's, without its
	// staleness check in each of the plan's inspects.
	if bin := os.Getenv("K6_BIN"); bin != "" {
		if _, ok := vars["K6_BIN"]; !ok {
			vars["K6_BIN"] = bin
		}
	}
	getenv := func(k string) string { return vars[k] }
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	e := cli.Env{Getenv: getenv, Environ: append(os.Environ(), environ...), Stdout: io.Discard, Stderr: io.Discard,
		Root: p.Root, Now: time.Now, Exec: func(ctx context.Context, c harness.Cmd) (int, error) {
			// k6 inspect reads the scenario's path from the repository's root, where loadtest runs.
			cmd := exec.CommandContext(ctx, c.Name, c.Args...)
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.Root, c.Env, c.Stdout, c.Stderr
			if err := cmd.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					return ee.ExitCode(), nil
				}
				return -1, err
			}
			return 0, nil
		}}
	loads, err := cli.PlanStacks(context.Background(), e, sub)
	tier := strings.Split(vars["TIER"], ",")[0]
	if sub == "spotcheck" || tier == "" || tier == "api" || tier == "all" || tier == "connector" || tier == "acme" || tier == "limiter" {
		tier = "default"
	}
	return loads, tier, err
}

// Schedule lays the jobs out as go test runs them: the serial tests first, one after another; then the
// parallel ones, in the order given, each in the first free of the slots, and a job marked alone draining
// them all (the e2e suite's machine lock). Stacks side by side on 2 CPUs do not go as many times as fast:
// the shared part takes at least its work over the concurrency a rehearsal achieved, after the
// exclusive runs.
func Schedule(jobs []Job, slots int, concurrency float64) (time.Duration, []Job) {
	var out []Job
	var serialEnd time.Duration
	for _, j := range jobs {
		if j.Serial {
			j.Start, j.End = serialEnd, serialEnd+j.Took
			serialEnd = j.End
			out = append(out, j)
		}
	}
	free := make([]time.Duration, slots)
	for i := range free {
		free[i] = serialEnd
	}
	var work, exclusive time.Duration
	end := serialEnd
	for _, j := range jobs {
		if j.Serial {
			continue
		}
		if j.Alone {
			exclusive += j.Took
			start := slices.Max(free)
			j.Start, j.End = start, start+j.Took
			for i := range free {
				free[i] = j.End
			}
		} else {
			work += j.Took
			i := slices.Index(free, slices.Min(free))
			j.Start, j.End = free[i], free[i]+j.Took
			free[i] = j.End
		}
		end = max(end, j.End)
		out = append(out, j)
	}
	floor := serialEnd + exclusive + time.Duration(float64(work)/concurrency)
	return max(end, floor).Round(time.Second), out
}

// ParallelSlots reads -parallel N from the Makefile's go test of target: the plan schedules what make runs.
func ParallelSlots(makefile, target string) (int, error) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:.*\n(?:\t[^\n]*\n)*?\t[^\n]*go test [^\n]*-parallel (\d+)`).FindStringSubmatch(makefile)
	if m == nil {
		return 0, fmt.Errorf("Makefile: %s runs no `go test ... -parallel N`", target)
	}
	return strconv.Atoi(m[1])
}
