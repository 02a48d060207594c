package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/syncbuf"
)

// Interrupted is the cause of a run's cancellation by a signal; main cancels the run's context with it.
type Interrupted struct {
	Signal string    // SIGINT, SIGTERM
	At     time.Time // when it arrived
}

func (i Interrupted) Error() string { return "interrupted by " + i.Signal }

// dockerEvent is one line of `docker events --format '{{json .}}'`.
type dockerEvent struct {
	Type   string `json:"Type"`
	Action string `json:"Action"`
	Actor  struct {
		ID         string            `json:"ID"`
		Attributes map[string]string `json:"Attributes"`
	} `json:"Actor"`
	TimeNano int64 `json:"timeNano"`
}

// watchEvents follows the container events of the run's project from since until stop is called, and
// stop returns them. They must be followed live: the engine keeps only its last 256 events, and the
// stack's healthchecks alone (an exec every 2 s per service) push a fault out of them within minutes.
func (r *Runner) watchEvents(since time.Time) (stop func() ([]results.StackEvent, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	var errb bytes.Buffer
	done := make(chan struct{})
	var code int
	var err error
	args := []string{"events", "--since", since.UTC().Format(time.RFC3339Nano),
		"--filter", "type=container", "--filter", "label=com.docker.compose.project=" + r.Cfg.Project}
	for _, a := range stackActionNames {
		args = append(args, "--filter", "event="+a)
	}
	go func() {
		defer close(done)
		code, err = r.Exec(ctx, Cmd{Name: "docker", Args: append(args, "--format", "{{json .}}"), Env: r.Env, Stdout: &out, Stderr: &errb})
	}()
	return func() ([]results.StackEvent, error) {
		// The engine stamps an event a moment after the fact: the last ones of the load arrive late.
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		cancel()
		<-done
		events, perr := parseEvents(strings.NewReader(out.String()), since)
		if ctx.Err() == nil && (err != nil || code != 0) {
			return events, fmt.Errorf("docker events: exit %d: %s", code, firstLine(errb.String(), err))
		}
		return events, perr
	}
}

// Actions that change what a container does; the rest (exec, attach, …) say nothing about the load.
var stackActionNames = []string{"die", "kill", "oom", "pause", "unpause", "start", "stop", "restart"}

var stackActions = func() map[string]bool {
	m := map[string]bool{}
	for _, a := range stackActionNames {
		m[a] = true
	}
	return m
}()

func parseEvents(rd io.Reader, loadStart time.Time) ([]results.StackEvent, error) {
	var events []results.StackEvent
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e dockerEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return events, fmt.Errorf("docker events: %w", err)
		}
		if e.Type != "container" || !stackActions[e.Action] {
			continue
		}
		at := time.Unix(0, e.TimeNano).UTC()
		a := e.Actor.Attributes
		ev := results.StackEvent{
			Service: a["com.docker.compose.service"], Container: a["name"], Action: e.Action, At: at,
			IntoLoadS: at.Sub(loadStart).Round(time.Millisecond).Seconds(),
		}
		if c, err := strconv.Atoi(a["exitCode"]); err == nil && e.Action == "die" {
			ev.ExitCode = &c
		}
		if e.Action == "kill" {
			ev.Signal = a["signal"]
		}
		events = append(events, ev)
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].At.Before(events[j].At) })
	return events, sc.Err()
}

// describeEvents turns the stack's events during the load into one sentence per fault: a service that
// was running when the load began and exited, restarted or was paused; a k6 process that was killed
// (exit 137: its record is lost). running is the services running when the load began; k6Names maps a
// k6 container's name to its scenario.
func describeEvents(events []results.StackEvent, running map[string]bool, k6Names map[string]string, scenarios []results.ScenarioRun) []string {
	var out []string
	byContainer := map[string][]results.StackEvent{}
	var order []string
	for _, e := range events {
		if _, seen := byContainer[e.Container]; !seen {
			order = append(order, e.Container)
		}
		byContainer[e.Container] = append(byContainer[e.Container], e)
	}
	for _, c := range order {
		evs := byContainer[c]
		if sc, ok := k6Names[c]; ok {
			for _, e := range evs {
				if e.Action == "die" && e.ExitCode != nil && *e.ExitCode == 137 {
					out = append(out, fmt.Sprintf("k6 of %s was killed (exit 137) at %s into the load: its record is lost, and raw/%s.json.gz ends there",
						sc, clock(e.IntoLoadS), sc))
				}
			}
			continue
		}
		if len(evs) == 0 || (running != nil && !running[evs[0].Service]) {
			continue
		}
		out = append(out, describeService(evs, scenarios)...)
	}
	return out
}

// describeService reads one container's events in order.
func describeService(evs []results.StackEvent, scenarios []results.ScenarioRun) []string {
	var out []string
	svc := evs[0].Service
	oom := false
	for i, e := range evs {
		switch e.Action {
		case "oom":
			oom = true
		case "pause":
			s := fmt.Sprintf("%s was paused at %s into the load%s", svc, clock(e.IntoLoadS), scenariosAt(e.At, scenarios))
			if j := nextEvent(evs, i, "unpause"); j >= 0 {
				s += fmt.Sprintf(" and resumed %.1f s later", evs[j].At.Sub(e.At).Seconds())
			} else {
				s += " and was still paused when the load ended"
			}
			out = append(out, s+": requests to it hung meanwhile")
		case "die":
			code := 0
			if e.ExitCode != nil {
				code = *e.ExitCode
			}
			s := fmt.Sprintf("%s exited with %d at %s into the load%s", svc, code, clock(e.IntoLoadS), scenariosAt(e.At, scenarios))
			if k := prevEvent(evs, i, "kill"); k >= 0 && evs[k].Signal != "" {
				s += fmt.Sprintf(" (sent signal %s)", evs[k].Signal)
			}
			if oom {
				s += " (out of memory)"
			}
			if j := nextEvent(evs, i, "start"); j >= 0 {
				s += fmt.Sprintf(" and restarted %.1f s later", evs[j].At.Sub(e.At).Seconds())
			} else {
				s += " and did not come back"
			}
			out = append(out, s)
		}
	}
	return out
}

func nextEvent(evs []results.StackEvent, i int, action string) int {
	for j := i + 1; j < len(evs); j++ {
		if evs[j].Action == action {
			return j
		}
		if evs[j].Action == evs[i].Action {
			return -1
		}
	}
	return -1
}

func prevEvent(evs []results.StackEvent, i int, action string) int {
	for j := i - 1; j >= 0 && evs[i].At.Sub(evs[j].At) < 15*time.Second; j-- {
		if evs[j].Action == action {
			return j
		}
	}
	return -1
}

// scenariosAt names the scenarios whose k6 ran at t.
func scenariosAt(t time.Time, scenarios []results.ScenarioRun) string {
	var names []string
	for _, s := range scenarios {
		if s.StartedAt != nil && !t.Before(*s.StartedAt) && (s.EndedAt == nil || !t.After(*s.EndedAt)) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (during " + strings.Join(names, ", ") + ")"
}
