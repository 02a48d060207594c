package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procTicks is one process's line of /proc/<pid>/stat, the parts the run's own share needs.
type procTicks struct {
	pid, ppid  int
	comm       string
	own, child uint64 // utime+stime; cutime+cstime (its children it has waited for)
}

// readProcTicks reads /proc/<pid>/stat; the command name may hold spaces and parentheses, so the fields
// are counted from its last ")".
func readProcTicks(proc string, pid int) (procTicks, bool) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procTicks{}, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return procTicks{}, false
	}
	f := strings.Fields(s[close+1:]) // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
	if len(f) < 15 {
		return procTicks{}, false
	}
	var v [4]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[11+i], 10, 64)
		if err != nil {
			return procTicks{}, false
		}
		v[i] = n
	}
	ppid, _ := strconv.Atoi(f[1])
	return procTicks{pid: pid, ppid: ppid, comm: s[open+1 : close], own: v[0] + v[1], child: v[2] + v[3]}, true
}

// engineComms are the container engine's processes: what the run's healthchecks, execs, event stream
// and logs cost outside the containers. (The kernel keeps 15 characters of a name:
// containerd-shim-runc-v2 is containerd-shim.)
var engineComms = map[string]bool{"dockerd": true, "containerd": true, "containerd-shim": true, "docker-proxy": true}

// procCPU follows, in clock ticks, the CPU of the processes that work for the run outside its
// containers: the harness itself with the docker commands it starts (and the ones it has waited for,
// through its children's time), and the engine. A scan of /proc finds them every rescan reads; the
// reads between read only their own stat files.
type procCPU struct {
	proc    string
	self    int
	harness map[int]bool
	engine  map[int]uint64 // pid → its own ticks at the last read
	last    uint64         // the harness's total at the last read
	reads   int
	started bool
}

// rescanEvery: reads between two scans of /proc (a read a second: every 5 s).
const rescanEvery = 5

// read returns the ticks the harness and the engine used since the last read (0, 0 on the first).
func (p *procCPU) read() (harness, engine uint64) {
	if p.reads%rescanEvery == 0 {
		p.scan()
	}
	p.reads++
	// The harness with its descendants, each with the children it has waited for: a docker command that
	// ended between two reads is in its parent's children's time; one still running in its own.
	var total uint64
	for pid := range p.harness {
		t, ok := readProcTicks(p.proc, pid)
		if !ok {
			delete(p.harness, pid) // ended: its time moved to its parent's children's
			continue
		}
		total += t.own + t.child
	}
	if p.started && total > p.last {
		harness = total - p.last
	}
	p.last = total
	// The engine's own time only: the children its shims wait for are the containers' processes, which
	// their cgroups count already.
	for pid, before := range p.engine {
		t, ok := readProcTicks(p.proc, pid)
		if !ok {
			delete(p.engine, pid)
			continue
		}
		if p.started && t.own >= before {
			engine += t.own - before
		}
		p.engine[pid] = t.own
	}
	p.started = true
	return harness, engine
}

// scan finds the harness's descendants and the engine's processes. A process found after the first read
// counts from its start: the next read takes its whole time so far (it began within the last scan's
// interval, or the engine started it for the run).
func (p *procCPU) scan() {
	entries, err := os.ReadDir(p.proc)
	if err != nil {
		return
	}
	parent := map[int]int{}
	comm := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, ok := readProcTicks(p.proc, pid); ok {
			parent[pid], comm[pid] = t.ppid, t.comm
		}
	}
	if p.harness == nil {
		p.harness, p.engine = map[int]bool{}, map[int]uint64{}
	}
	for pid := range parent {
		if engineComms[comm[pid]] {
			if _, known := p.engine[pid]; !known {
				p.engine[pid] = 0
			}
			continue
		}
		for q, hops := pid, 0; q > 0 && hops < 64; q, hops = parent[q], hops+1 {
			if q == p.self {
				p.harness[pid] = true
				break
			}
		}
	}
}
