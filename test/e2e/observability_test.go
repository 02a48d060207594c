package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"
)

// promSeries is one series of a Prometheus instant query: its labels and its value.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery asks Prometheus's HTTP API for an instant vector.
func promQuery(base, q string) ([]promSeries, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Result []promSeries `json:"result"`
		} `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s", q, body.Error)
	}
	return body.Data.Result, nil
}

// freePort is a port on the loopback nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The live view, really started: a short API run with OBSERVABILITY=true on the offline images brings up
// the kit's Prometheus (Debian's, images/prometheus) beside the stack, without Grafana (the kit has none,
// and the run says so), and every k6 writes to it by remote write. While the load runs, Prometheus's own
// query API answers k6's metrics per scenario with numbers: the request count and the p95 the dashboard's
// latency panels read (K6_PROMETHEUS_RW_TREND_STATS), under the run's testid. Grafana's provisioning is
// checked statically against the dashboard (test/observability).
func TestObservabilityLive(t *testing.T) {
	t.Parallel()
	e2e(t)
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := stackEnv(t, "OBSERVABILITY=true", "PROMETHEUS_PORT="+strconv.Itoa(port), "SCENARIOS=list_certificates", "DURATION=45s")
	type found struct {
		requests, p95 float64
		err           error
	}
	var got found
	r := runDuring(t, env, func(*os.Process) {
		deadline := time.Now().Add(4 * time.Minute)
		for time.Now().Before(deadline) {
			time.Sleep(2 * time.Second)
			values := map[string]float64{}
			for name, q := range map[string]string{
				"requests": `sum by (scenario, testid) (k6_http_reqs_total{scenario="list_certificates"})`,
				"p95":      `max by (scenario, testid) (k6_http_req_duration_p95{scenario="list_certificates"})`,
			} {
				series, err := promQuery(base, q)
				if err != nil {
					got.err = err // Prometheus not up yet, or gone: the last error is reported if nothing came
					continue
				}
				for _, s := range series {
					if v, err := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64); err == nil && v > 0 && s.Metric["testid"] != "" {
						values[name] = v
					}
				}
			}
			if values["requests"] > 0 && values["p95"] > 0 {
				got = found{requests: values["requests"], p95: values["p95"]}
				return
			}
		}
	}, loadtest, "run")
	wantCode(t, r, 0)
	wantOutput(t, r, `live view: Prometheus http://127\.0\.0\.1:`+strconv.Itoa(port)+` .*no Grafana offline`)
	if got.requests == 0 || got.p95 == 0 {
		t.Fatalf("Prometheus never answered k6's metrics for list_certificates while the run lasted (last error: %v)", got.err)
	}
	t.Logf("Prometheus, during the run: list_certificates %.0f requests, p95 %.1f ms", got.requests, got.p95*1000)
	if got.p95 > 60 {
		t.Errorf("p95 %g: k6's remote write sends seconds; a figure over a minute means another unit", got.p95)
	}
}
