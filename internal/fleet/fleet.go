// Package fleet turns a fleet, as its operator describes it, into the steady-state load it puts on
// certctl at a size N (each operation's rate), and searches for the largest N at which a run of that
// load on an inventory of N certificates holds every budget: the fleet answer (docs/fleet.md).
package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// Description is a fleet's shape, independent of its size: fleets/*.yaml. Every field is required, so
// that an answer never rests on a default nobody chose.
type Description struct {
	Name string `yaml:"name" json:"name"`
	// RotationDays: days between two renewals of one certificate (47: the CA/Browser Forum's 2029 lifetime).
	RotationDays float64 `yaml:"rotation_days" json:"rotation_days"`
	// ACMEShare: the share of certificates renewed by ACME clients; the rest by certctl's agents.
	ACMEShare float64 `yaml:"acme_share" json:"acme_share"`
	// CertificatesPerAgent: how many certificates one agent serves; agents = certificates ÷ this.
	CertificatesPerAgent float64 `yaml:"certificates_per_agent" json:"certificates_per_agent"`
	// AgentPollSeconds: how often each agent asks for work (certctl's agent: a fixed 30 s).
	AgentPollSeconds float64 `yaml:"agent_poll_seconds" json:"agent_poll_seconds"`
	// OCSPPerCertificateDay: OCSP checks relying parties make per certificate a day.
	OCSPPerCertificateDay float64 `yaml:"ocsp_checks_per_certificate_per_day" json:"ocsp_checks_per_certificate_per_day"`
	// RenewalInfoPerCertificateDay: renewal-info (ARI) checks an ACME client makes per certificate a day.
	RenewalInfoPerCertificateDay float64 `yaml:"renewal_info_checks_per_certificate_per_day" json:"renewal_info_checks_per_certificate_per_day"`
	// DashboardUsers, each reloading the dashboard's summary every DashboardRefreshSeconds and listing
	// certificates ListsPerUserMinute times a minute.
	DashboardUsers          float64 `yaml:"dashboard_users" json:"dashboard_users"`
	DashboardRefreshSeconds float64 `yaml:"dashboard_refresh_seconds" json:"dashboard_refresh_seconds"`
	ListsPerUserMinute      float64 `yaml:"lists_per_user_minute" json:"lists_per_user_minute"`
	// PeakFactor: the day's busiest hour over its mean, applied to renewals and checks (the agents' polls
	// and the dashboard's users are steady).
	PeakFactor float64 `yaml:"peak_factor" json:"peak_factor"`
}

// fields are the description's YAML keys, in the file's order: each must be present.
var fields = []string{"name", "rotation_days", "acme_share", "certificates_per_agent", "agent_poll_seconds",
	"ocsp_checks_per_certificate_per_day", "renewal_info_checks_per_certificate_per_day", "dashboard_users",
	"dashboard_refresh_seconds", "lists_per_user_minute", "peak_factor"}

// Parse reads a description strictly: an unknown key, a missing one or a value out of its range is an
// error naming the key and the file.
func Parse(b []byte, file string) (Description, error) {
	var d Description
	var keys map[string]any
	if err := yaml.Unmarshal(b, &keys); err != nil {
		return d, fmt.Errorf("%s: %v", file, err)
	}
	var missing []string
	for _, f := range fields {
		if _, ok := keys[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return d, fmt.Errorf("%s: missing %s (every field of a fleet is stated: see fleets/example.yaml)", file, strings.Join(missing, ", "))
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("%s: %v", file, err)
	}
	if err := d.check(); err != nil {
		return d, fmt.Errorf("%s: %v", file, err)
	}
	return d, nil
}

func (d Description) check() error {
	var errs []error
	positive := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s: %g must be a positive number", name, v))
		}
	}
	atLeastZero := func(name string, v float64) {
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s: %g must be zero or more", name, v))
		}
	}
	if strings.TrimSpace(d.Name) == "" {
		errs = append(errs, errors.New("name: empty"))
	}
	positive("rotation_days", d.RotationDays)
	if !(d.ACMEShare >= 0 && d.ACMEShare <= 1) {
		errs = append(errs, fmt.Errorf("acme_share: %g must be a share between 0 and 1", d.ACMEShare))
	}
	positive("certificates_per_agent", d.CertificatesPerAgent)
	positive("agent_poll_seconds", d.AgentPollSeconds)
	atLeastZero("ocsp_checks_per_certificate_per_day", d.OCSPPerCertificateDay)
	atLeastZero("renewal_info_checks_per_certificate_per_day", d.RenewalInfoPerCertificateDay)
	atLeastZero("dashboard_users", d.DashboardUsers)
	positive("dashboard_refresh_seconds", d.DashboardRefreshSeconds)
	atLeastZero("lists_per_user_minute", d.ListsPerUserMinute)
	if !(d.PeakFactor >= 1) || math.IsInf(d.PeakFactor, 0) {
		errs = append(errs, fmt.Errorf("peak_factor: %g must be 1 (a flat day) or more", d.PeakFactor))
	}
	return errors.Join(errs...)
}

// Op is one operation of a fleet's load at a size: the scenario that makes it, its rate as derived and
// as run (a whole number a second or a minute, what k6's arrival rate takes), and how it was derived.
type Op struct {
	Scenario  string  `json:"scenario"`
	What      string  `json:"what"`
	Formula   string  `json:"formula"`
	PerSecond float64 `json:"per_second"` // as derived
	Rate      int     `json:"rate"`       // as run, per Unit
	Unit      string  `json:"unit"`       // "s" or "m"
	// Raised: the fleet makes it less often than MinIterations a step; it runs that often instead.
	Raised bool `json:"raised,omitempty"`
}

// RunPerSecond is the rate the run offers, after rounding.
func (o Op) RunPerSecond() float64 {
	if o.Unit == "m" {
		return float64(o.Rate) / 60
	}
	return float64(o.Rate)
}

const day = 86400.0

// PerSecondAt is the smallest rate a second run per second: below it an operation runs per minute, whose
// whole numbers round it by at most 1/120 of its rate at 1/s (1 of 60 a minute, halved).
const PerSecondAt = 20.0

// The tiers whose scenarios make a fleet's load.
const Tiers = "api,acme,pki,growth"

// Mix is the fleet's load at n certificates, busiest first; an operation the fleet does not make (no
// ACME clients, no dashboard users) is left out.
func (d Description) Mix(n float64) []Op {
	renewals := n / (d.RotationDays * day) * d.PeakFactor
	ops := []Op{
		{Scenario: "agent_work", What: "agents' work polls", Formula: "certificates ÷ certificates_per_agent ÷ agent_poll_seconds",
			PerSecond: n / d.CertificatesPerAgent / d.AgentPollSeconds},
		{Scenario: "ocsp_crl", What: "OCSP and CRL checks by relying parties", Formula: "certificates × ocsp_checks_per_certificate_per_day ÷ 86400 × peak_factor",
			PerSecond: n * d.OCSPPerCertificateDay / day * d.PeakFactor},
		{Scenario: "acme_flow", What: "ACME clients' renewal-info checks", Formula: "certificates × acme_share × renewal_info_checks_per_certificate_per_day ÷ 86400 × peak_factor",
			PerSecond: n * d.ACMEShare * d.RenewalInfoPerCertificateDay / day * d.PeakFactor},
		{Scenario: "acme_order_flow", What: "ACME renewals (signed orders)", Formula: "certificates × acme_share ÷ (rotation_days × 86400) × peak_factor",
			PerSecond: renewals * d.ACMEShare},
		{Scenario: "issuance_acceptance", What: "agent renewals (certificate requests)", Formula: "certificates × (1 − acme_share) ÷ (rotation_days × 86400) × peak_factor",
			PerSecond: renewals * (1 - d.ACMEShare)},
		{Scenario: "stats_summary", What: "dashboard summaries", Formula: "dashboard_users ÷ dashboard_refresh_seconds",
			PerSecond: d.DashboardUsers / d.DashboardRefreshSeconds},
		{Scenario: "list_certificates", What: "certificate listings by dashboard users", Formula: "dashboard_users × lists_per_user_minute ÷ 60",
			PerSecond: d.DashboardUsers * d.ListsPerUserMinute / 60},
	}
	var out []Op
	for _, o := range ops {
		if o.PerSecond <= 0 {
			continue
		}
		if o.PerSecond >= PerSecondAt {
			o.Rate, o.Unit = int(math.Round(o.PerSecond)), "s"
		} else {
			o.Rate, o.Unit = max(1, int(math.Round(o.PerSecond*60))), "m"
		}
		out = append(out, o)
	}
	return out
}

// MinIterations is how many times a step's run makes each operation at least, so that its p95 budget
// judges a percentile and not the run's slowest call: k6's p(95) of 11 samples lies between the two
// slowest. At 11 dashboard summaries a run, v2.1.7's search (2026-12-07) broke at 5,700 certificates
// (p95 823 ms against 800) and held at 6,000 (693 ms): the search's 25 % steps were finer than one
// sample's noise. With 20, ocsp_crl's iterations also give each of its four checks (OCSP by GET and
// POST, the CRL whole and by ETag) five samples. A slower operation of the fleet runs this often, and
// the record says so (Raised).
const MinIterations = 20

// RunMix is Mix at n as a run of stepS seconds makes it: an operation the fleet makes fewer than
// MinIterations times in a step runs that many times, per minute.
func (d Description) RunMix(n, stepS float64) []Op {
	ops := d.Mix(n)
	least := int(math.Ceil(MinIterations * 60 / stepS))
	for i, o := range ops {
		if o.Unit == "m" && o.Rate < least {
			ops[i].Rate, ops[i].Raised = least, true
		}
	}
	return ops
}

// Knobs are the run's knobs for a mix: its tiers and scenarios, each scenario's rate and unit.
func Knobs(mix []Op) map[string]string {
	var names []string
	k := map[string]string{"TIER": Tiers}
	for _, o := range mix {
		names = append(names, o.Scenario)
		up := strings.ToUpper(o.Scenario)
		k["RATE_"+up] = fmt.Sprint(o.Rate)
		k["TIME_UNIT_"+up] = o.Unit
	}
	k["SCENARIOS"] = strings.Join(names, ",")
	return k
}
