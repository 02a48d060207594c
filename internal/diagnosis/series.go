package diagnosis

import (
	"encoding/json"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"certctl-loadtest/internal/samples"
)

// maxPoints bounds each chart: one bucket per StepS seconds, at least 5 s, so a 24-hour soak still draws.
const maxPoints = 240

// series buckets the load into steps and gives each chart its lines: k6's iterations and latency per
// scenario (raw/<name>.json.gz), CPU per service, database waits per class.
func series(in Input, server string) *Series {
	var end time.Time
	for _, sc := range in.Scenarios {
		if sc.To.After(end) {
			end = sc.To
		}
	}
	if in.LoadStart.IsZero() || !end.After(in.LoadStart) {
		return nil
	}
	total := end.Sub(in.LoadStart).Seconds()
	step := math.Max(5, math.Ceil(total/maxPoints))
	n := int(math.Ceil(total / step))
	s := &Series{StepS: step}
	for i := 0; i < n; i++ {
		s.T = append(s.T, float64(i)*step)
	}
	bucket := func(t time.Time) int {
		i := int(t.Sub(in.LoadStart).Seconds() / step)
		if i < 0 || i >= n {
			return -1
		}
		return i
	}
	for _, sc := range in.Scenarios {
		rate, p95 := k6Series(filepath.Join(in.Dir, "raw", sc.Name+".json.gz"), sc.LatencyMetric, n, step, bucket)
		if rate != nil {
			s.Rate = append(s.Rate, Line{Name: sc.Name, Values: rate})
			s.P95MS = append(s.P95MS, Line{Name: sc.Name, Values: p95})
		}
	}
	// CPU: the mean of each service's samples in a bucket.
	cpuSum := map[string][]float64{}
	cpuN := map[string][]int{}
	readLines(filepath.Join(server, "containers.jsonl"), func(b []byte) {
		var l containerLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		i := bucket(l.At)
		if i < 0 {
			return
		}
		svc := l.Service
		if strings.HasPrefix(svc, "k6-") {
			svc = "k6"
		}
		if cpuSum[svc] == nil {
			cpuSum[svc], cpuN[svc] = make([]float64, n), make([]int, n)
		}
		cpuSum[svc][i] += l.CPUPct
		cpuN[svc][i]++
	})
	// k6's processes each have their own samples per refresh: summed per refresh, then averaged.
	refreshes := map[int]map[int]bool{}
	readLines(filepath.Join(server, "containers.jsonl"), func(b []byte) {
		var l containerLine
		if json.Unmarshal(b, &l) != nil || !strings.HasPrefix(l.Service, "k6-") {
			return
		}
		if i := bucket(l.At); i >= 0 {
			if refreshes[i] == nil {
				refreshes[i] = map[int]bool{}
			}
			refreshes[i][l.Refresh] = true
		}
	})
	for _, svc := range sortedKeys(cpuSum) {
		vals := make([]*float64, n)
		for i := range vals {
			div := cpuN[svc][i]
			if svc == "k6" {
				div = len(refreshes[i])
			}
			if div > 0 {
				v := round1(cpuSum[svc][i] / float64(div))
				vals[i] = &v
			}
		}
		s.CPU = append(s.CPU, Line{Name: svc, Values: vals})
	}
	s.CPU = append(s.CPU, machineLines(server, n, bucket)...)
	// Database waits: mean active backends per class per sample in the bucket.
	waitSum := map[string][]float64{}
	samples := make([]int, n)
	readLines(filepath.Join(server, "pg_activity.jsonl"), func(b []byte) {
		var l activityLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		i := bucket(l.At)
		if i < 0 {
			return
		}
		samples[i]++
		for _, be := range l.Backends {
			if be.State != "active" {
				continue
			}
			w := "CPU"
			if be.Wait != nil {
				w = *be.Wait
			}
			c := waitClass(w)
			if waitSum[c] == nil {
				waitSum[c] = make([]float64, n)
			}
			waitSum[c][i]++
		}
	})
	for _, c := range sortedKeys(waitSum) {
		vals := make([]*float64, n)
		for i := range vals {
			if samples[i] > 0 {
				v := round2(waitSum[c][i] / float64(samples[i]))
				vals[i] = &v
			}
		}
		s.Waits = append(s.Waits, Line{Name: c, Values: vals})
	}
	return s
}

// k6Series reads a scenario's raw samples: iterations per second and the judged latency's p95 per
// bucket. Setup and teardown are not the load.
func k6Series(path, latencyMetric string, n int, step float64, bucket func(time.Time) int) (rate, p95 []*float64) {
	sel := samples.Parse(latencyMetric)
	iters := make([]float64, n)
	lat := make([][]float64, n)
	read := 0
	_, err := samples.Read(path, []string{"iterations", sel.Name}, func(p samples.Point) {
		read++
		if !p.Load() {
			return
		}
		i := bucket(p.Time)
		switch {
		case i < 0:
		case p.Metric == "iterations":
			iters[i] += p.Value
		case sel.Matches(p.Tags):
			lat[i] = append(lat[i], p.Value)
		}
	})
	if err != nil && read == 0 {
		return nil, nil
	}
	rate, p95 = make([]*float64, n), make([]*float64, n)
	for i := 0; i < n; i++ {
		if iters[i] > 0 {
			v := round2(iters[i] / step)
			rate[i] = &v
		}
		if len(lat[i]) > 0 {
			v := round2(samples.Quantile(lat[i], 0.95))
			p95[i] = &v
		}
	}
	return rate, p95
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// machineLines are the machine's whole busy CPU and the part of it outside the run (its containers, the
// harness and the engine), in the CPU chart's unit (% of one CPU), from server/host.jsonl; none when the
// run did not read the host.
func machineLines(server string, n int, bucket func(time.Time) int) []Line {
	run := map[int]float64{} // refresh → the containers' CPU
	readLines(filepath.Join(server, "containers.jsonl"), func(b []byte) {
		var l containerLine
		if json.Unmarshal(b, &l) == nil {
			run[l.Refresh] += l.CPUPct
		}
	})
	busy, outside := make([]float64, n), make([]float64, n)
	count := make([]int, n)
	readLines(filepath.Join(server, "host.jsonl"), func(b []byte) {
		var l HostSample
		if json.Unmarshal(b, &l) != nil || l.CPUs == 0 {
			return
		}
		i := bucket(l.At)
		if i < 0 {
			return
		}
		all := l.BusyPct * float64(l.CPUs)
		ours := run[l.Refresh]
		if l.HarnessPct != nil && l.EnginePct != nil {
			ours += (*l.HarnessPct + *l.EnginePct) * float64(l.CPUs)
		}
		busy[i] += all
		outside[i] += math.Max(0, all-ours)
		count[i]++
	})
	seen := false
	b, o := make([]*float64, n), make([]*float64, n)
	for i := range count {
		if count[i] > 0 {
			seen = true
			bv, ov := round1(busy[i]/float64(count[i])), round1(outside[i]/float64(count[i]))
			b[i], o[i] = &bv, &ov
		}
	}
	if !seen {
		return nil
	}
	return []Line{{Name: "machine (all)", Values: b}, {Name: "outside the run", Values: o}}
}
