package report

import (
	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Text renders summary.txt: the verdict first, then one row per scenario, then every threshold.
func Text(s results.Summary) string {
	var b strings.Builder
	verdict := s.Verdict()
	r := s.Run
	fmt.Fprintf(&b, "certctl-loadtest run %s: %s (exit %d)\n", s.RunID, verdict, s.ExitCode)
	// What happened to the run or the stack comes before any figure: a crashed server must not read as
	// a slow one.
	for _, f := range append(nonEmpty(r.Error), r.Faults...) {
		fmt.Fprintf(&b, "! %s\n", f)
	}
	for _, l := range aboutLines(s) {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")

	if len(s.Scenarios) == 0 {
		b.WriteString("no scenario ran\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(s.Scenarios) > 0 {
		fmt.Fprintf(tw, "scenario\ttier\t%s\tresult\n", strings.Join(figureColumns, "\t"))
	}
	for _, sc := range s.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sc.Name, sc.Tier, strings.Join(figures(sc), "\t"), sc.Status)
	}
	tw.Flush()
	for _, sc := range s.Scenarios {
		if rec := sc.Record; rec != nil && rec.CutShort {
			fmt.Fprintf(&b, "%s was cut short: its achieved rate is over the %.0f s it ran, of %.0f s configured\n", sc.Name, rec.TestRunDurationS, rec.DurationS)
		}
	}
	for _, u := range r.Unavailable {
		fmt.Fprintf(&b, "unavailable against an external certctl: %s (%s)\n", u.Scenario, u.Reason)
	}
	segmented := false
	for _, sc := range s.Scenarios {
		if sc.Record != nil && len(sc.Record.Segments) > 1 {
			if !segmented {
				b.WriteString("\nsplit loads (each scenario's figures and thresholds are from its segments' pooled samples)\n")
				segmented = true
			}
			var parts []string
			for _, g := range sc.Record.Segments {
				parts = append(parts, fmt.Sprintf("%s %s: %.0f iterations, %.0f requests, %.0f dropped", g.ID, g.Segment, g.Iterations, g.Requests, g.Dropped))
			}
			fmt.Fprintf(&b, "  %s: %s\n", sc.Name, strings.Join(parts, "; "))
		}
	}

	if len(s.Findings) > 0 {
		b.WriteString("\ncertctl's defects this run met\n")
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	if len(s.PKITier) > 0 {
		b.WriteString("\n" + PKITable(s.PKITier))
	}
	if len(s.ConnectorTier) > 0 {
		b.WriteString("\nconnector tier (ms; p50…max: connect + TLS handshake + request of a fresh connection; handshake: the TLS part)\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "target\t%s\tresult\n", strings.Join(connectorColumns, "\t"))
		for _, t := range sortedKeys(s.ConnectorTier) {
			c := s.ConnectorTier[t]
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t, strings.Join(connectorFigures(c), "\t"), c.Status)
		}
		tw.Flush()
	}
	if len(s.DeployTier) > 0 {
		b.WriteString("\ndeploy tier (loops by how they ended; seconds, p50/p95 of the served loops' stages: " + deployStages + ")\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "scenario\ttarget\t%s\n", strings.Join(deployColumns, "\t"))
		for _, d := range s.DeployTier {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Scenario, d.TargetType, strings.Join(deployFigures(d), "\t"))
		}
		tw.Flush()
	}
	var lines []string
	for _, sc := range s.Scenarios {
		for _, line := range []string{massLine(sc), scanLine(sc), fleetLine(sc)} {
			if line != "" {
				lines = append(lines, line)
			}
		}
	}
	if len(lines) > 0 {
		if len(s.DeployTier) == 0 {
			b.WriteString("\ndeploy tier\n")
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	for _, sc := range s.Scenarios {
		t, note := totals(sc)
		if t == "" {
			continue
		}
		fmt.Fprintf(&b, "\n%s totals: %s", sc.Name, t)
		if note != "" {
			fmt.Fprintf(&b, "\n  (%s)", note)
		}
		b.WriteString("\n")
	}
	if len(s.Scenarios) > 0 {
		b.WriteString("\nthresholds\n")
	}
	// Each line: verdict, metric, limit and what was measured, in columns across every scenario.
	ttw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, sc := range s.Scenarios {
		if sc.Record == nil {
			continue
		}
		ts, unjudged := judgedThresholds(sc.Record)
		for _, t := range ts {
			if m := t.Measured(); m != "" {
				fmt.Fprintf(ttw, "  %s\t%s\t%s\t%s\n", t.Mark, t.Metric, t.Expression, m)
			} else {
				fmt.Fprintf(ttw, "  %s\t%s\t%s\n", t.Mark, t.Metric, t.Expression) // no trailing padding
			}
		}
		if unjudged && len(ts) > 0 {
			fmt.Fprintf(ttw, "  (%s: not judged: setup() failed, no load was generated)\n", sc.Name)
		}
	}
	ttw.Flush()
	if len(s.FailedChecks) > 0 {
		b.WriteString("\nwhy it failed\n")
		for _, f := range s.FailedChecks {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	breachesText(&b, s.Breaches)
	if s.Diagnosis != nil {
		diagnosisText(&b, s.Diagnosis)
	}
	return b.String()
}

// breachesText is the broken thresholds in groups: new (no known defect of certctl explains them, with
// why the registry's entries that name them do not), known and worse than recorded (counted as new),
// known (with the defects that do, and how far their signature accounts), unjudged (a known defect's
// latency recorded on another testbed or load), and the known defects this build showed before that
// the run did not meet. Nothing when there is nothing in any group.
func breachesText(b *strings.Builder, v *defects.Verdict) {
	if v == nil || len(v.New)+len(v.Known)+len(v.Worse)+len(v.Unjudged)+len(v.NotAppearing) == 0 {
		return
	}
	build := v.Build
	if build == "" {
		build = "this build"
	}
	b.WriteString("\nbreaches against certctl's known defects (docs/certctl-findings.md)\n")
	if len(v.New) > 0 {
		b.WriteString("  new: no known defect explains them\n")
		for _, x := range v.New {
			fmt.Fprintf(b, "    - %s%s\n", breachLine(x), because(x.Why))
		}
	}
	groups := []struct {
		head string
		ks   []defects.Known
	}{
		{"  known, and worse than recorded (counted as new): a known defect's latency past what " + build + " measured before\n", v.Worse},
		{"  known: certctl's defects, as registered (each with a script that shows it without the harness: docs/findings/repro/<id>.sh)\n", v.Known},
		{"  unjudged: a known defect's latency, recorded on another testbed or at another load than this run's\n", v.Unjudged},
	}
	for _, g := range groups {
		if len(g.ks) == 0 {
			continue
		}
		b.WriteString(g.head)
		for _, x := range g.ks {
			fmt.Fprintf(b, "    - %s: %s%s\n", breachLine(x.Breach), strings.Join(x.Defects, ", "), because(x.Why))
		}
	}
	if len(v.NotAppearing) > 0 {
		fmt.Fprintf(b, "  not appearing: seen on %s before, not met by this run (fixed?)\n", build)
		for _, a := range v.NotAppearing {
			fmt.Fprintf(b, "    - %s (%s): %s ran without it\n", a.Defect, a.Title, strings.Join(a.Scenarios, ", "))
		}
	}
}

func breachLine(x defects.Breach) string {
	l := x.Scenario + ": " + x.Threshold
	if x.Measured != "" {
		l += " (" + x.Measured + ")"
	}
	return l
}

func because(why string) string {
	if why == "" {
		return ""
	}
	return " — " + why
}

// PKITable renders PKI rows in a CA benchmark's columns (ok: operations that succeeded; per s: over the
// configured duration), under its heading: a run's summary shows its own, a PKI sequence all of them.
func PKITable(rows []results.PKIRow) string {
	var b strings.Builder
	b.WriteString("pki tier (" + pkiNote + ")\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\toperation\t%s\tresult\n", strings.Join(pkiColumns, "\t"))
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Scenario, r.Operation, strings.Join(pkiFigures(r), "\t"), r.Status)
	}
	tw.Flush()
	return b.String()
}

const pkiNote = "as a CA benchmark reports it: operations that succeeded, per second over the run; ms of the successful ones"

var pkiColumns = []string{"clients", "ok", "per s", "p50", "p95", "p99", "max"}

// pkiFigures: an ACME order's steps have no count of their own (the order's row has it), an arrival
// rate no number of clients, and an operation that never succeeded no latency.
func pkiFigures(r results.PKIRow) []string {
	ok, per, clients := "-", "-", "-"
	if !strings.HasPrefix(r.Operation, " ") {
		ok, per = fmt.Sprintf("%.0f", r.OK), fmt.Sprintf("%.1f", r.PerSecond)
	}
	if r.Clients > 0 {
		clients = fmt.Sprint(r.Clients)
	}
	lat := []string{ms(r.Latency.P50), ms(r.Latency.P95), ms(r.Latency.P99), ms(r.Latency.Max)}
	if r.Latency.Max == 0 {
		lat = dashes(len(lat))
	}
	return append([]string{clients, ok, per}, lat...)
}

// aboutLines say what ran, where and how: certctl's identity, the tiers, k6 and PostgreSQL, the time and
// host, the command line.
func aboutLines(s results.Summary) []string {
	r := s.Run
	lines := strings.Split(strings.TrimSuffix(certctlLine(s.CertctlVersion, r.Certctl), "\n"), "\n")
	tiers := fmt.Sprintf("tiers %s · %s", strings.Join(r.Tiers, ","), orUnknown(r.K6Version))
	if r.Postgres != "" {
		tiers += " · PostgreSQL " + r.Postgres
	}
	lines = append(lines, tiers)
	when := fmt.Sprintf("%s → %s (%.0f s) · host %d CPUs", r.StartedAt.UTC().Format(time.RFC3339), r.EndedAt.UTC().Format(time.RFC3339), r.DurationS, r.Host.CPUs)
	if r.Host.DockerVersion != "" {
		when += " · docker " + r.Host.DockerVersion
	}
	lines = append(lines, when)
	if r.Testbed != nil {
		// What the machine could do as the run began: figures from another testbed are another experiment.
		lines = append(lines, "testbed: "+r.Testbed.String())
	}
	if r.Command != "" {
		lines = append(lines, "command: "+r.Command)
	}
	return lines
}

// figureColumns head a scenario's key figures; summary.txt and index.html show the same ones.
var figureColumns = []string{"target", "achieved", "requests", "dropped", "errors", "avg ms", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms"}

// figures are a scenario's key figures under figureColumns, "-" for each one its record does not give.
func figures(sc results.Scenario) []string {
	rec := sc.Record
	if rec == nil {
		return dashes(len(figureColumns))
	}
	target, achieved := rec.RateCells()
	out := []string{target, achieved,
		fmt.Sprintf("%.0f", rec.Requests), fmt.Sprintf("%.0f", rec.DroppedIterations), fmt.Sprintf("%.2f%%", rec.ErrorRate*100)}
	if rec.LatencySamples != nil && *rec.LatencySamples == 0 && rec.Requests > 0 {
		// Every request failed: there is no latency, and 0 ms would read as fast.
		return append(out, dashes(len(figureColumns)-len(out))...)
	}
	l := rec.LatencyMS
	return append(out, ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.Max))
}

func dashes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "-"
	}
	return out
}

// connectorColumns head a target type's figures (ms) in the connector tier table.
var connectorColumns = []string{"iterations", "errors", "p50", "p95", "p99", "max", "handshake p50", "handshake p95", "handshake p99", "handshake max"}

func connectorFigures(c results.ConnectorRow) []string {
	h := c.TLSHandshakeMS
	return []string{fmt.Sprintf("%.0f", c.Iterations), fmt.Sprintf("%.2f%%", c.ErrorRate*100),
		ms(c.P50MS), ms(c.P95MS), ms(c.P99MS), ms(c.MaxMS), ms(h.P50), ms(h.P95), ms(h.P99), ms(h.Max)}
}

// massLine: a mass rotation's whole, "" for other scenarios.
func massLine(sc results.Scenario) string {
	r := sc.Record
	if r == nil || r.Tier != "deploy" || r.TrendsMS["per_minute"].Max == 0 {
		return ""
	}
	all := "not every target served a new certificate"
	if r.LatencyMS.Max > 0 {
		all = fmt.Sprintf("every target served a new certificate after %.1f s", r.LatencyMS.Max/1000)
	}
	return fmt.Sprintf("%s: %s; %.0f deployments a minute", sc.Name, all, r.TrendsMS["per_minute"].Max)
}

// scanLine: a renewal scan's figures (k6/deploy/renewal_scan.js), "" for other scenarios: the scan's
// jobs and their span by certctl's clock, then the job processor's dispatch and drain after the last.
func scanLine(sc results.Scenario) string {
	r := sc.Record
	if r == nil || r.Tier != "deploy" || r.Scenario != "renewal_scan" {
		return ""
	}
	var setup struct {
		Check string `json:"renewal_check_interval"`
		Jobs  string `json:"job_processor_interval"`
	}
	json.Unmarshal(r.Setup, &setup)
	line := fmt.Sprintf("%s: %.0f due certificates, %.0f Renewal jobs", sc.Name, r.Counters["due"], r.Counters["renewal_jobs"])
	if r.LatencyMS.Max > 0 {
		line += fmt.Sprintf(" created over %.1f s (%.2f ms per certificate)", r.LatencyMS.Max/1000, r.TrendsMS["per_certificate"].Max)
	}
	for _, p := range []struct{ what, trend string }{{"dispatched", "dispatch"}, {"drained", "drain"}} {
		if l, ok := r.TrendsMS[p.trend]; ok && l.Max > 0 {
			line += fmt.Sprintf("; %s %.1f s after the last", p.what, l.Max/1000)
		} else {
			line += "; not " + p.what
		}
	}
	return line + fmt.Sprintf(" (renewal check every %s, job processor every %s)", setup.Check, setup.Jobs)
}

// fleetLine: a fleet rotation's figures (k6/deploy/fleet_rotation.js), "" for other scenarios: the
// rate and what it stands for, how the renewals ended, their loop and the job backlog.
func fleetLine(sc results.Scenario) string {
	r := sc.Record
	if r == nil || r.Tier != "deploy" || r.Scenario != "fleet_rotation" {
		return ""
	}
	var setup struct {
		Agents      float64 `json:"fleet_agents"`
		Certs       float64 `json:"fleet_targets"`
		PerMin      float64 `json:"renewals_per_min"`
		Days        float64 `json:"rotation_days"`
		Compression float64 `json:"compression"`
		Equivalent  float64 `json:"equivalent_fleet"`
	}
	json.Unmarshal(r.Setup, &setup)
	c := r.Counters
	line := fmt.Sprintf("%s: %.0f certificates on %.0f agents, %.0f renewals a minute (%g-day rotation compressed %g×: a %.0f-certificate fleet's rate); "+
		"%.0f renewed: %.0f deployed, %.0f not signed, %.0f failed, %.0f stuck",
		sc.Name, setup.Certs, setup.Agents, setup.PerMin, setup.Days, setup.Compression, setup.Equivalent,
		c["renewals"], c["deployed"], c["not_signed"], c["failed"], c["stuck"])
	if r.LatencyMS.Max > 0 {
		line += fmt.Sprintf("; loop p50/p95 %.1f/%.1f s", r.LatencyMS.P50/1000, r.LatencyMS.P95/1000)
	}
	if b, ok := r.TrendsMS["backlog"]; ok {
		line += fmt.Sprintf("; open jobs p50/p95/max %.0f/%.0f/%.0f", b.P50, b.P95, b.Max)
	}
	return line
}

// deployStages says what each stage of a deploy loop is, for the table's readers.
const deployStages = "signed: renew → CSR signed; job: → deployment job done; served: → the target serves the new serial; loop: renew → served"

var deployColumns = []string{"completed", "stolen", "stuck", "failed", "f5 token limit", "not served", "not signed",
	"signed p50", "signed p95", "job p50", "job p95", "served p50", "served p95", "loop p50", "loop p95", "loop p99", "loop max"}

func deployFigures(d results.DeployRow) []string {
	n := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	// Seconds: the agents' 30-second poll puts loops at tens of seconds. "-": no loop got that far.
	sec := func(l results.Latency, v float64) string {
		if l.Max == 0 && d.LoopMS.Max == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", v/1000)
	}
	return []string{n(d.Completed), n(d.Stolen), n(d.Stuck), n(d.Failed), n(d.F5TokenLimit), n(d.NotServed), n(d.NotSigned),
		sec(d.SignedMS, d.SignedMS.P50), sec(d.SignedMS, d.SignedMS.P95), sec(d.JobMS, d.JobMS.P50), sec(d.JobMS, d.JobMS.P95),
		sec(d.ServedMS, d.ServedMS.P50), sec(d.ServedMS, d.ServedMS.P95),
		sec(d.LoopMS, d.LoopMS.P50), sec(d.LoopMS, d.LoopMS.P95), sec(d.LoopMS, d.LoopMS.P99), sec(d.LoopMS, d.LoopMS.Max)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// totals are the counters a scenario reported ("enqueued 12, skipped 3"), "" when none, and what a
// reader must know to read them.
func totals(sc results.Scenario) (line, note string) {
	if sc.Record == nil || len(sc.Record.Counters) == 0 {
		return "", ""
	}
	var parts []string
	for _, k := range sortedKeys(sc.Record.Counters) {
		if perTargetType(sc.Record, k) {
			continue // the deploy tier's table shows it
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", k, sc.Record.Counters[k]))
	}
	var notes []string
	if sc.Record.Counters["f5_token_limit"] > 0 {
		notes = append(notes, "f5_token_limit: deployments the F5 refused because certctl's F5 connector logs in for each one and never logs out, and BIG-IP keeps 100 live tokens per user — certctl's defect, docs/certctl-findings.md#f5-token-leak; counted apart from failed")
	}
	if sc.Record.Counters["endpoint_no_job"] > 0 {
		notes = append(notes, "endpoint_no_job: POST /certificates/{id}/deploy answered 202 and created no deployment job — certctl's placeholder, docs/certctl-findings.md#no-target-binding")
	}
	if sc.Record.Counters["stolen"] > 0 {
		notes = append(notes, "stolen: deployment jobs that went Running while their agent did not ask for work (certctl's audit trail), still Running when the loop gave up: certctl's job processor claimed them and never runs them — docs/certctl-findings.md#job-processor-steals")
	}
	if sc.Record.Counters["stuck"] > 0 {
		notes = append(notes, "stuck: deployment jobs still open when the loop gave up that their agent took and never finished, or that nothing took")
	}
	if sc.Record.Counters["ari_other_issuer_404"] > 0 {
		issuers := "several"
		if n, ok := sc.Record.SetupValue("ari_issuers").(float64); ok {
			issuers = fmt.Sprintf("%.0f", n)
		}
		notes = append(notes, "ari_other_issuer_404: renewal-info answered 404 for a certificate it issued because certctl looks the serial up under an arbitrary one of its "+issuers+" issuers — certctl's bug, docs/certctl-findings.md#ari-any-issuer; counted apart, not as a harness failure")
	}
	if sc.Record.Counters["revoke_leading_zero_404"] > 0 {
		notes = append(notes, "revoke_leading_zero_404: revoke-cert answered 404 for a certificate it issued whose serial starts with 0 — certctl's known bug, docs/certctl-findings.md#ari-leading-zero; counted apart, not as a harness failure")
	}
	if sc.Record.Counters["ari_leading_zero_404"] > 0 {
		notes = append(notes, "ari_leading_zero_404: renewal-info answered 404 for a certificate it issued whose serial starts with 0 — certctl's known bug, docs/certctl-findings.md#ari-leading-zero; counted apart, not as a harness failure")
	}
	if len(sc.Failures) > 0 {
		var by []string
		for _, f := range sc.Failures {
			answer := "HTTP " + f.Status
			if f.Status == "0" {
				answer = "no answer"
			}
			by = append(by, fmt.Sprintf("%s %s ×%.0f", f.Step, answer, f.Count))
		}
		notes = append(notes, "failed at, with the step's answer: "+strings.Join(by, ", "))
	}
	return strings.Join(parts, ", "), strings.Join(notes, "; ")
}

// perTargetType: a deploy scenario's counter for one target type (completed_nginx), which the deploy
// tier's table shows.
func perTargetType(r *results.Record, counter string) bool {
	if r.Tier != "deploy" {
		return false
	}
	i := strings.LastIndex(counter, "_")
	_, ok := r.TrendsMS["loop_"+counter[i+1:]]
	return i > 0 && ok
}

// judgedThreshold is a threshold with its mark: ok, FAIL, or - when it was not judged.
type judgedThreshold struct {
	results.Threshold
	Mark string
}

// judgedThresholds are a record's thresholds by metric, marked, and whether none was judged: k6
// reports the thresholds of a run whose setup() aborted as held, over no samples at all.
func judgedThresholds(r *results.Record) (ts []judgedThreshold, unjudged bool) {
	unjudged = !r.SetupRan()
	for _, t := range r.Thresholds {
		mark := "ok"
		switch {
		case unjudged:
			mark = "-"
		case !t.OK:
			mark = "FAIL"
		}
		ts = append(ts, judgedThreshold{t, mark})
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Metric < ts[j].Metric })
	return ts, unjudged
}

// ms prints a latency with three significant digits: 0.412, 3.22, 41.3, 1250.
func ms(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// certctlLine names the certctl that ran by its image first: a build that reports "dev" (as certctl's
// official images do) or nothing says nothing about which release it is.
func certctlLine(reported string, c results.Certctl) string {
	var b strings.Builder
	if c.URL != "" {
		// Not started by the harness: which build it is, only its operator knows.
		fmt.Fprintf(&b, "certctl at %s (external: not started by the harness)", c.URL)
	} else {
		fmt.Fprintf(&b, "certctl %s", orUnknown(c.Image))
	}
	if c.ImageID != "" {
		fmt.Fprintf(&b, " (image %s)", shortID(c.ImageID))
	}
	switch reported {
	case "", "unknown":
		b.WriteString(" · reports no version")
	case "dev":
		b.WriteString(` · reports version "dev": a build with no version stamped, known by its image only`)
	default:
		fmt.Fprintf(&b, " · reports %s", reported)
	}
	if c.Build != "" {
		fmt.Fprintf(&b, " · packaged from %s", c.Build)
		if c.ServerSHA256 != "" {
			fmt.Fprintf(&b, " (server sha256 %s)", shortID(c.ServerSHA256))
		}
	}
	b.WriteString("\n")
	if c.Faults != "" {
		fmt.Fprintf(&b, "faults injected by the fault proxy between k6 and certctl: %s\n", c.Faults)
	}
	return b.String()
}

// shortID is the first 12 hex digits of a digest, as docker shows them.
func shortID(id string) string {
	algo, hex, ok := strings.Cut(id, ":")
	if !ok {
		hex, algo = id, ""
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if algo != "" {
		return algo + ":" + hex
	}
	return hex
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
