package ciplan

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CostsFile is where CI's steps keep what they last cost: scripts/ci-step.sh rewrites a step's line when
// the step passes under .ci/run (CI_COSTS names the file), with the plan it ran against.
const CostsFile = ".ci/costs.tsv"

// Cost is one step's last measurement.
type Cost struct {
	Took time.Duration
	// Planned is what the plan said of the step when it was measured (CI_PLAN, written by TestCIPlan
	// earlier in the same CI); zero for a step with no plan of its runs.
	Planned time.Duration
	When    string // the measurement's date and the commit it ran on
}

// ReadCosts reads CostsFile's lines: step, seconds, planned seconds or -, when, commit.
func ReadCosts(path string) (map[string]Cost, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]Cost{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		fields := strings.Split(l, "\t")
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: %q: want step, seconds, planned seconds (or -), when, commit, tab-separated", path, n, l)
		}
		s, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || s < 0 {
			return nil, fmt.Errorf("%s:%d: %s: seconds %q", path, n, fields[0], fields[1])
		}
		c := Cost{Took: seconds(s), When: strings.Join(fields[3:], " ")}
		if fields[2] != "-" {
			p, err := strconv.ParseFloat(fields[2], 64)
			if err != nil || p <= 0 {
				return nil, fmt.Errorf("%s:%d: %s: planned %q", path, n, fields[0], fields[2])
			}
			c.Planned = seconds(p)
		}
		out[fields[0]] = c
	}
	return out, sc.Err()
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}
