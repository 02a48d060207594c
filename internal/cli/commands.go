package cli

import (
	"context"
	"slices"
	"sort"
)

// command is one subcommand: its page (what `loadtest help` lists and `loadtest help <name>` prints) and
// its run. A new command is one value in commands and its own file.
type command struct {
	name    string
	aliases []string // second names it answers to, its page the first's
	usage   []string // synopsis lines, without "loadtest "
	summary string   // one line for the overview
	about   string   // what it does, in a paragraph or two
	flags   [][2]string
	knobs   []string // the environment it reads beyond the run's own configuration; "run" names the common knobs
	example string
	// anywhere: it needs no clone of the repository around it.
	anywhere bool
	// run runs it, called by name (its own or an alias), once Main has answered any help it was asked.
	run runFunc
}

type runFunc func(ctx context.Context, e Env, name string, args []string) int

// argsOnly and ctxArgs are a command whose run needs neither its name nor (argsOnly) a context.
func argsOnly(fn func(Env, []string) int) runFunc {
	return func(_ context.Context, e Env, _ string, args []string) int { return fn(e, args) }
}

func ctxArgs(fn func(context.Context, Env, []string) int) runFunc {
	return func(ctx context.Context, e Env, _ string, args []string) int { return fn(ctx, e, args) }
}

// registry is the commands Main knows, in the order the overview lists them.
type registry []command

// commands are loadtest's, the daily ones first. (A function, not a variable: the runs reach back to
// the pages, for their usage after an error.)
func commands() registry {
	return registry{
		{
			name: "run", run: runArgs, usage: []string{"run [--segments N]"},
			summary: "run the tiers in TIER against certctl; the exit code is the verdict",
			about: "Starts the stack (certctl, PostgreSQL, the targets), runs the selected scenarios for DURATION, and writes " +
				"results/<RUN_ID>/ (summary.json, summary.txt, index.html) with the verdict and a diagnosis of where the time went. " +
				"The configuration is the environment's (docs/configuration.md); the run takes no arguments.",
			flags:   [][2]string{{"--segments N", "each scenario as N k6 processes, an execution segment of its load each, merged into one record (SEGMENTS=N does the same; docs/distributed.md)"}},
			knobs:   []string{"TIER", "SCENARIOS", "DURATION", "RATE_<SCENARIO>", "IMAGES", "CERTCTL_DIST", "CERTCTL_IMAGE", "RUN_ID", "DIAGNOSIS", "TARGET"},
			example: "TIER=api SCENARIOS=list_certificates DURATION=1m loadtest run",
		},
		{
			name: "check", run: runArgs, usage: []string{"check [--segments N]"},
			summary: "validate the configuration and print the plan, without starting anything",
			about: "Refuses exactly what run refuses, with the same sentence; otherwise prints the images it resolved, each selected " +
				"scenario's load as k6 inspect resolves it, and the load's wall time.",
			flags:   [][2]string{{"--segments N", "as for run"}},
			knobs:   []string{"TIER", "SCENARIOS", "DURATION", "RATE_<SCENARIO>", "IMAGES", "CERTCTL_DIST"},
			example: "TIER=acme DURATION=2m loadtest check",
		},
		{
			name: "report", run: argsOnly(reportCmd), usage: []string{"report [--write] [run-dir]", "report --format markdown [run-dir] [exit-code]", "report --format junit [run-dir]"},
			summary: "print a saved run's summary, rendered afresh from its records",
			about: "Prints the run's summary and exits with its verdict; nothing is written (a downloaded artifact stays as it came) " +
				"unless --write, which rewrites its summary.json, summary.txt, junit.xml and index.html. Without a directory, results/latest. " +
				"--format markdown prints the workflow's job summary and exits 0 whatever it finds; exit-code stands in when the run wrote no summary.json. " +
				"--format junit prints the run as JUnit XML (every run writes it as junit.xml): a threshold a test case, a known defect's or the machine's breach skipped with its reason.",
			flags:   [][2]string{{"--write", "rewrite the run's summary files"}, {"--format text|markdown|junit", "text (default), the Markdown job summary, or JUnit XML"}},
			example: "loadtest report results/latest",
		},
		{
			name: "calibrate", run: ctxArgs(calibrateCmd), usage: []string{"calibrate [--json]"},
			summary: "measure this machine as every run does before its load: its testbed",
			about: "A fixed unit of CPU work on one core and on every core, fdatasync latency where PostgreSQL's volume lives (the " +
				"engine's volumes directory, else the working directory), memory, and steal; about 1.5 s. Every run records the same in " +
				"run.json and summary.json; compare says \"not comparable\" when two runs' testbeds differ (docs/methodology.md#testbeds).",
			flags:   [][2]string{{"--json", "print the calibration as JSON"}},
			example: "loadtest calibrate",
		},
		{
			name: "compare", run: argsOnly(compareCmd), usage: []string{"compare [--format text|markdown|json] [--noise F] [--tolerance F] [--confidence F] [--out DIR] OLD NEW"},
			summary: "set two sets of runs side by side, scenario by scenario, with intervals",
			about: "Percentiles and error rate with intervals (bootstrap over runs and 10 s blocks of requests from raw/), ~ for a change " +
				"inside the noise, and the diagnosis's cause. OLD and NEW are each [label=]run-dir[,run-dir...]. Exits 1 when a metric is " +
				"significantly worse by more than the tolerance, 7 when the sides ran on different testbeds (their calibrations differ: " +
				"\"not comparable\", whatever the rows show), 2 on bad input. Flags may come before or after the sides. Two capacity " +
				"directories compare their knees; two fleet answers (loadtest fleet's directories) their sizes, a smaller one exit 1, two testbeds or fleets exit 7.",
			flags: [][2]string{
				{"--format text|markdown|json", "how to print it (default text)"},
				{"--noise F", "a change inside F is shown as ~ (default 0.10)"},
				{"--tolerance F", "how much worse fails (default 0)"},
				{"--confidence F", "the intervals' level (default 0.95)"},
				{"--out DIR", "also write compare.json, .txt and .md there"},
			},
			example: "loadtest compare v2.1.7=results/a1,results/a2 main=results/b1,results/b2 --format markdown",
		},
		{
			name: "gate", run: gateCmd, usage: []string{"gate [--plan | --rejudge DIR] [--runs N] [--tolerance F] [--reference BUILD] --candidate BUILD [--reference-knob K=V]... [--candidate-knob K=V]..."},
			summary: "judge a certctl build against a reference run beside it: the pull-request gate",
			about: "Runs the reference and the candidate alternately (A B B A ...) on one machine in one sitting, each run on a fresh stack, " +
				"then compares the two sets and gives one verdict, in one sentence first: pass, regressed (significantly slower beyond the " +
				"tolerance, with the cause from both sides' diagnoses), new-breach (a budget the candidate broke in every run, the reference " +
				"held in every run and no registered defect explains), inconclusive (the two sides ran on different testbeds, or the runner " +
				"decides a budget: broken on the reference too) or failed (a run left no results). Exits 0, 1, 99, 6, or the failed run's code. " +
				"A BUILD is a certctl build directory (CERTCTL_DIST) or a server image, [label=] before it names the side; the reference " +
				"defaults to the release .env pins. Its plan (two runs a side of a minute, TIER=api,acme at the tiers' rates on 4 CPUs and their share " +
				"on fewer, judged on medians, error rates and throughput at 95 % for those rows at once, " +
				"tolerance 25 %: docs/comparing.md#the-pull-request-gate) is the environment's where it sets TIER, SCENARIOS, DURATION or " +
				"RATE_<SCENARIO>. Writes results/<RUN_ID>/gate.{json,txt,md} and compare.{json,txt,md}, each run in results/<RUN_ID>/<RUN_ID>-r1, -c1, ....",
			flags: [][2]string{
				{"--plan", "print the plan and its wall time, check both sides' runs, and stop"},
				{"--rejudge DIR", "judge a finished gate's runs again with this harness's rules, and print the verdict (nothing is written)"},
				{"--runs N", "runs a side (default 2)"},
				{"--tolerance F", "how much slower fails (default 0.25)"},
				{"--reference BUILD", "the build judged against (default: .env's CERTCTL_IMAGE)"},
				{"--candidate BUILD", "the build judged"},
				{"--reference-knob K=V, --candidate-knob K=V", "a knob on one side's runs only (a fault injected into the candidate)"},
			},
			knobs:   []string{"TIER", "SCENARIOS", "DURATION", "RATE_<SCENARIO>", "RUN_ID"},
			example: "loadtest gate --reference /opt/certctl/v2.1.7 --candidate ./dist",
		},
		{
			name: "compare-builds", run: gateCmd, usage: []string{"compare-builds [--plan | --rejudge DIR] [--runs N] [--tolerance F] [--reference BUILD] --candidate BUILD [--reference-knob K=V]... [--candidate-knob K=V]..."},
			summary: "the release compare: the gate's runs and verdict with the tiers' own load",
			about: "The gate (loadtest help gate) with the release's plan: three runs a side of two minutes, TIER=api,acme at the tiers' own " +
				"rates, every row judged at 99 %, tolerance 0, unless the environment or the flags say otherwise. make compare-builds runs it " +
				"(OLD is the reference, NEW the candidate) and adds KNEE's capacity searches.",
			flags: [][2]string{
				{"--plan", "print the plan and its wall time, and stop"},
				{"--rejudge DIR", "judge a finished compare's runs again with this harness's rules"},
				{"--runs N", "runs a side (default 3)"},
				{"--tolerance F", "how much slower fails (default 0)"},
			},
			knobs:   []string{"TIER", "SCENARIOS", "DURATION", "RATE_<SCENARIO>", "RUN_ID"},
			example: "loadtest compare-builds --reference /opt/certctl/v2.1.7 --candidate /opt/certctl/main",
		},
		{
			name: "capacity", run: measurement("SCENARIO and the CAPACITY_* knobs", "docs/capacity.md", capacityCmd), usage: []string{"capacity"},
			summary: "search a scenario's knee: the highest rate at which its budget holds",
			about: "Ramps SCENARIO's arrival rate ×CAPACITY_FACTOR, then bisects; a breach counts when a repeat breaches too. Each step is an " +
				"ordinary run of CAPACITY_STEP. Results in results/<RUN_ID>/ (capacity.json, .txt, .svg and each step's run); docs/capacity.md.",
			knobs:   []string{"SCENARIO", "CAPACITY_START", "CAPACITY_FACTOR", "CAPACITY_MAX", "CAPACITY_PRECISION", "CAPACITY_STEP"},
			example: "TIER=api SCENARIO=list_certificates CAPACITY_STEP=1m loadtest capacity",
		},
		{
			name: "growth", run: measurement("GROWTH_SIZES and the run's knobs", "docs/growth.md", growthCmd), usage: []string{"growth"},
			summary: "run the same mix at several inventory sizes and fit how each operation's latency grows",
			about: "Each size of GROWTH_SIZES is an ordinary run on a fresh stack seeded with SEED_INVENTORY certificates' year of history " +
				"(seed/inventory/); the mix is TIER and SCENARIOS, else list, issuance, ACME renewal-info and OCSP at low rates, for DURATION (1m unless set). " +
				"Results in results/<RUN_ID>/ (growth.json, .txt, .svg and each size's run); docs/growth.md.",
			knobs:   []string{"GROWTH_SIZES", "TIER", "SCENARIOS", "DURATION", "CERTCTL_DIST"},
			example: "GROWTH_SIZES=1000,10000,100000 loadtest growth",
		},
		{
			name: "fleet", run: measurement("FLEET, FLEET_GROWTH or FLEET_BRACKET, FLEET_STEP and the run's knobs", "docs/fleet.md", fleetCmd), usage: []string{"fleet"},
			summary: "search the largest fleet of FLEET's shape this certctl carries at its rotation, on this testbed",
			about: "FLEET (fleets/example.yaml) describes a fleet's shape; at each size N its steady-state load (each operation's rate at the day's peak) " +
				"runs for FLEET_STEP on a fresh stack seeded with N certificates' year of history. The search brackets N (from FLEET_GROWTH's growth curves " +
				"when given), bisects it to 25 %, then confirms: a run at the answer that holds every budget and one at 1.25× it that does not; a confirming run that breaks " +
				"refutes its size and the search goes on below it (three confirming runs at most). " +
				"Exit 0 when confirmed, 99 when not. Results in results/<RUN_ID>/ (fleet.json, .txt and each run); docs/fleet.md.",
			knobs:   []string{"FLEET", "FLEET_GROWTH", "FLEET_BRACKET", "FLEET_MAX", "FLEET_STEP", "FLEET_RESUME", "CERTCTL_DIST"},
			example: "FLEET_GROWTH=docs/growth/v2.1.7.json loadtest fleet",
		},
		{
			name: "soak", run: measurement("DURATION, SOAK_WINDOW and the run's knobs", "docs/growth.md", soakCmd), usage: []string{"soak"},
			summary: "run a steady mix for long and judge its drift: p95 per window, memory, tables, autovacuum",
			about: "One ordinary run of growth's mix (or TIER and SCENARIOS) for DURATION (30m unless set), read in windows of SOAK_WINDOW: " +
				"each scenario's p95 trend, certctl's and PostgreSQL's memory, every table's size and autovacuums from start to end. " +
				"Exit 99 when the p95 drifts beyond SOAK_P95_DRIFT or certctl's memory grows beyond SOAK_MEMORY_GROWTH; soak.json, .txt and plots in the run directory; docs/growth.md.",
			knobs:   []string{"DURATION", "SOAK_WINDOW", "SOAK_P95_DRIFT", "SOAK_MEMORY_GROWTH", "SEED_INVENTORY", "CERTCTL_DIST"},
			example: "DURATION=2h SEED_INVENTORY=100000 loadtest soak",
		},
		{
			name: "coldstart", run: measurement("GROWTH_SIZES and the run's knobs", "docs/growth.md", coldstartCmd), usage: []string{"coldstart"},
			summary: "restart certctl at several inventory sizes: time to healthy, the first hundred requests, a restart under load",
			about: "At each size of GROWTH_SIZES, a fresh stack seeded with SEED_INVENTORY certificates: certctl stopped and started " +
				"(seconds to a healthy /health, then the first 100 listings beside 100 warm ones), then restarted while listings arrive at 10/s " +
				"(seconds to the first answer, the requests failed, the first 100 answered). Results in results/<RUN_ID>/ (coldstart.json, .txt); docs/growth.md.",
			knobs:   []string{"GROWTH_SIZES", "START_TIMEOUT", "CERTCTL_DIST"},
			example: "GROWTH_SIZES=1000,10000,100000 loadtest coldstart",
		},
		{
			name: "spotcheck", run: runArgs, usage: []string{"spotcheck"},
			summary: "run the operator spot checks (k6/spotcheck/*.js) one after another",
			about:   "Like run, but the spot checks of docs/performance-baselines.md instead of the tiers.",
			knobs:   []string{"SCENARIOS", "DURATION", "CERTCTL_DIST"},
			example: "SCENARIOS=stats_summary loadtest spotcheck",
		},
		{
			name: "findings", run: ctxArgs(findingsCmd), usage: []string{"findings [--only id,...]", "findings --issue ID", "findings --measure ID"},
			summary: "run the reproductions of certctl's findings against certctl",
			about: "Runs docs/findings/repro/<id>.sh against the stack's certctl (or TARGET=external's) and prints id, outcome and seconds; " +
				"results/<RUN_ID>/findings.{json,txt}. Exits 1 when an outcome differs from the catalogue for the build that ran " +
				"(docs/certctl-findings.md). --issue prints one finding as an issue body for certctl; --measure runs one measurement " +
				"of what a finding costs (docs/findings/cost/ID.sh). One of the three at a time.",
			flags: [][2]string{
				{"--only id,...", "only these reproductions"},
				{"--issue ID", "print the finding as an issue body (nothing runs)"},
				{"--measure ID", "run docs/findings/cost/ID.sh against the stack"},
			},
			knobs:   []string{"CERTCTL_DIST", "TARGET"},
			example: "loadtest findings --only ocsp-500,ari-leading-zero",
		},
		{
			name: "overhead", run: overheadCmd, usage: []string{"overhead"},
			summary: "measure what the run's own instruments cost certctl",
			about: "The configured load with every instrument on, and with each in OVERHEAD off in turn, OVERHEAD_RUNS rounds in ABBA order, " +
				"each an ordinary run; then compare per instrument into results/<RUN_ID>/overhead.{json,txt,md}. Exits 1 when every instrument " +
				"on moves a scenario's p50 beyond the noise; docs/diagnosis.md.",
			knobs:   []string{"OVERHEAD", "OVERHEAD_RUNS", "TIER", "DURATION"},
			example: "OVERHEAD=all OVERHEAD_RUNS=4 DURATION=2m loadtest overhead",
		},
		{
			name: "defects", run: argsOnly(defectsCmd), usage: []string{"defects record --id ID [--date YYYY-MM-DD] [--command TEXT] run-dir..."},
			summary: "print a known defect's recorded sizes from runs of one build, for its registry entry",
			about: "Reads the runs (each scenario's run directory) and prints, for the finding's record (docs/findings/<id>.md, registry: recorded:), the largest " +
				"value each latency the entry explains measured there, per scenario with its arrival rate, and the runs' testbed. Refuses " +
				"runs of two builds, two testbeds or two rates, and runs without the defect's signature: a known defect explains a " +
				"latency only up to what its build recorded (docs/certctl-findings.md#how-a-run-judges-them).",
			flags: [][2]string{{"--id ID", "the registry entry"}, {"--date YYYY-MM-DD", "when the runs ran (default: the first's)"},
				{"--command TEXT", "the command that made the runs, kept with the recording"}},
			example: "loadtest defects record --id session-pbkdf2-per-request results/rec-main-1-* results/rec-main-2-*",
		},
		{
			name: "baseline", run: ctxArgs(baselineCmd), usage: []string{"baseline [--name NAME] [--build BUILD] run-dir"},
			summary: "record a finished run as a baseline in docs/baselines/",
			about: "Writes docs/baselines/<build>/<name>.json (its summary and who recorded it from what) with its samples trimmed to " +
				"<name>.raw/, then regenerates the docs' tables; <build> is the certctl build or image tag.",
			flags:   [][2]string{{"--name NAME", "the baseline's name (default: the run's tiers)"}, {"--build BUILD", "the certctl build (default: the run's)"}},
			example: "loadtest baseline --name default results/latest",
		},
		{
			name: "trend", run: ctxArgs(trendCmd), usage: []string{"trend fetch --out DIR [--weeks N] [--exclude RUN_ID] [--workflow FILE]", "trend report --current DIR --out DIR [--history DIR] [--baselines DIR] [--tolerance F] [--store DIR [--week NAME]]"},
			summary: "the weekly workflow's trend: fetch previous runs, report this week against them",
			about: "fetch downloads the weekly workflow's previous scheduled runs' loadtest-* artifacts through GitHub's REST API " +
				"(GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_REF_NAME). report sets this week's runs against last week's and the baselines, " +
				"with each scenario's p95 and achieved rate over the weeks: trend.md, trend.json, trend-*.svg; exits 1 on a regression. " +
				"With --store (a directory kept across weeks: the workflow's data branch), the verdict is the series': this week is judged " +
				"against the weeks on its own testbed by Apache Otava's change points (OTAVA_PYTHON runs tools/otava/changepoints.py), " +
				"then added to the store; the pairwise comparisons are shown, not judged.",
			flags: [][2]string{
				{"--out DIR", "where to write (both)"},
				{"--weeks N", "fetch: how many weeks back (default 12)"},
				{"--exclude RUN_ID", "fetch: leave this workflow run out (the current one)"},
				{"--workflow FILE", "fetch: the workflow file (default: this workflow's, else loadtest.yml)"},
				{"--current DIR", "report: this week's runs"},
				{"--history DIR", "report: what fetch wrote"},
				{"--baselines DIR", "report: the committed baselines (default docs/baselines/weekly)"},
				{"--tolerance F", "report: how much worse fails (default 0)"},
				{"--store DIR", "report: the history this week is judged against and added to"},
				{"--week NAME", "report: this week's name in the history (default: #GITHUB_RUN_NUMBER and the date)"},
			},
			example: "loadtest trend report --current results/week --history history --out trend",
		},
		{
			name: "k8s", run: ctxArgs(k8sCmd), usage: []string{"k8s --out DIR [--namespace NS]"},
			summary: "write k6-operator TestRuns that run the scenarios from a Kubernetes cluster",
			about: "Writes the TestRuns (SEGMENTS runners each), their k6 archives, the results volume and a kustomization.yaml that run " +
				"the selected scenarios against CERTCTL_URL; loadtest judge reads back what the runners wrote.",
			flags:   [][2]string{{"--out DIR", "where to write the manifests"}, {"--namespace NS", "the namespace of the TestRuns"}},
			knobs:   []string{"CERTCTL_URL", "SEGMENTS", "TIER", "SCENARIOS", "DURATION"},
			example: "TARGET=external CERTCTL_URL=https://certctl.example:8443 SEGMENTS=4 loadtest k8s --out k8s-run",
		},
		{
			name: "judge", aliases: []string{"collect"}, run: argsOnly(judgeCmd), usage: []string{"judge run-dir"},
			summary: "judge a run from the records its k6 processes wrote, here or elsewhere (k6-operator runners)",
			about: "Reads the records in run-dir (a k6-operator run's results volume copied back, or a run of this machine's), merges a split " +
				"scenario's segments, and writes summary.json, summary.txt and index.html with the verdict, which is its exit code. " +
				"collect is its old name.",
			example: "loadtest judge results/k8s-run",
		},
		{
			name: "seed-external", aliases: []string{"clean-external"}, run: externalCmd, usage: []string{"seed-external", "clean-external"},
			summary: "TARGET=external: create (or archive and delete) the harness's base rows on that certctl",
			about: "seed-external creates the base rows the scenarios reference (team, owner, profile, renewal policy, issuer; ids LT_*_ID) " +
				"through certctl's API; clean-external archives the certificates and deletes the agents named lt-…, then the base rows. " +
				"Both need CONFIRM=yes.",
			knobs:   []string{"CERTCTL_URL", "CERTCTL_API_KEY", "CONFIRM"},
			example: "TARGET=external CERTCTL_URL=https://certctl.example:8443 CERTCTL_API_KEY=… CONFIRM=yes loadtest seed-external",
		},
		{
			name: "docs", run: ctxArgs(docsCmd), usage: []string{"docs [--check]"},
			summary: "regenerate the tables the docs carry from the code",
			about:   "Rewrites the generated blocks of the docs (k6 inspect of every scenario, the knobs, the findings); --check fails if one is stale.",
			flags:   [][2]string{{"--check", "report stale tables, change nothing"}},
			example: "loadtest docs --check",
		},
		{
			name: "version", anywhere: true, run: func(_ context.Context, e Env, _ string, _ []string) int { return versionCmd(e) }, usage: []string{"version"},
			summary: "the harness's build and the k6 and certctl it pins",
			about:   "Works from any directory; the pins are read from the repository's .env when the command is run inside it.",
			example: "loadtest version",
		},
		// help is Main's own, answered before any run.
		{name: "help", usage: []string{"help [command]"}, summary: "this overview, or one command's flags, knobs and an example", example: "loadtest help compare"},
	}
}

func (r registry) lookup(name string) (command, bool) {
	for _, c := range r {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c, true
		}
	}
	return command{}, false
}

func (r registry) names() []string {
	var names []string
	for _, c := range r {
		names = append(names, c.name)
		names = append(names, c.aliases...)
	}
	sort.Strings(names)
	return names
}
