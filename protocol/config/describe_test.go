package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"thv"
	"thv/stages/compare"
)

// TestDescribe: the paper's protocol is named so; another names the
// values that differ (a list of seeds by its length, a missing setting as
// one), the precision fewer seeds give, and the published values it
// cannot reproduce: a setting's d, n, k, T or σ, the reference point, the
// HV window; the readings sweep's keys and the readings of the paper's
// open points leave every value comparable. The paper's protocol is the
// embedded params.yaml whatever the environment says.
func TestDescribe(t *testing.T) {
	describe := func(opt LoadOptions) compare.Protocol {
		t.Helper()
		cfg, err := Load(opt)
		if err != nil {
			t.Fatal(err)
		}
		d, err := cfg.Describe()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := describe(LoadOptions{}); !d.IsPaper() || d.Name() != "the paper's protocol" {
		t.Errorf("the paper's: %+v", d)
	}
	quick := describe(LoadOptions{Profile: "quick"})
	want := "a modified protocol: grid_seeds 3 (paper 10), seeds 3 (paper 10), settings.d2.T 300 (paper 2000), settings.d3.T 300 (paper 3000), settings.d4.T 300 (paper 5000), settings.d5.T 300 (paper 5000)"
	if quick.Name() != want || quick.Seeds != 3 || quick.PaperSeeds != 10 {
		t.Errorf("quick: %q (seeds %d of %d)\nwant %q", quick.Name(), quick.Seeds, quick.PaperSeeds, want)
	}
	if got := quick.Incomparability(); got != "T 300 vs 2000 (d2), T 300 vs 3000 (d3), T 300 vs 5000 (d4), T 300 vs 5000 (d5)" {
		t.Errorf("quick's incomparability: %s", got)
	}
	if r := quick.Reason("d3", compare.MetricHV); r != "T 300 vs 3000" {
		t.Errorf("quick, d3: %q", r)
	}
	for _, c := range []struct {
		set                   []string
		name, reason, setting string
	}{
		{[]string{"seeds=[0, 1, 2]"}, "a modified protocol: seeds 3 (paper 10)", "", ""},
		{[]string{"seeds=[10, 11, 12, 13, 14, 15, 16, 17, 18, 19]"}, "a modified protocol: seeds [10 … 19] (10 values) (paper [0 … 9] (10 values))", "", ""},
		{[]string{"init_ties=random", "instances.mode=per_seed", "metrics.final_regret=regret_exact"}, "a modified protocol: init_ties random (paper lowest_index), instances.mode per_seed (paper fixed), metrics.final_regret regret_exact (paper regret_alpha_pos)", "", ""},
		{[]string{"readings.instance_seeds=[0, 1]"}, "the paper's protocol", "", ""},
		{[]string{"reference=0.1"}, "a modified protocol: reference 0.1 (paper 0)", "reference point 0.1 vs 0", "d2"},
		{[]string{"metrics.hv_window=50"}, "a modified protocol: metrics.hv_window 50 (paper 100)", "HV window 50 vs 100", "d2"},
		{[]string{"settings.d2={n: 40, sigma: 0.1}"}, "a modified protocol: settings.d2.n 40 (paper 36), settings.d2.sigma 0.1 (paper 0.05)", "n 40 vs 36, σ 0.1 vs 0.05", "d2"},
	} {
		d := describe(LoadOptions{Set: c.set})
		if d.Name() != c.name || d.Reason(c.setting, compare.MetricHV) != c.reason {
			t.Errorf("--set %v: %q, reason %q\nwant %q, reason %q", c.set, d.Name(), d.Reason(c.setting, compare.MetricHV), c.name, c.reason)
		}
	}
	// A part of the paper's protocol missing whole is one difference.
	path := filepath.Join(t.TempDir(), "two.yaml")
	src := strings.Replace(string(thv.DefaultParams), "  d4: {d: 4, n: 100, k: 5, T: 5000, sigma: 0.025}\n", "", 1)
	src = strings.Replace(src, "  - {name: RandomK, params: {once: 1}}\n", "", 1)
	src = strings.Replace(src, "      d4: {T: 300}\n", "", 2)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := describe(LoadOptions{ParamsFile: path}); d.Name() != "a modified protocol: algorithms.RandomK absent (paper present), settings.d4 absent (paper present)" || len(d.NotComparable) != 0 {
		t.Errorf("a setting and an algorithm removed: %q %+v", d.Name(), d.NotComparable)
	}
	// An algorithm's eta_scale left unset is the protocol's, and says so.
	src = strings.Replace(string(thv.DefaultParams), ", eta_scale: radius, params: {delta: 0, clip: 1}}", ", params: {delta: 0, clip: 1}}", 1)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := describe(LoadOptions{ParamsFile: path}); d.Name() != "a modified protocol: algorithms.THV-UCB.eta_scale variance (the protocol's eta_scale) (paper radius)" {
		t.Errorf("THV-UCB's eta_scale unset: %q", d.Name())
	}
	// The environment overrides the protocol, never the paper's.
	t.Setenv("THV_SEEDS", "0")
	if d := describe(LoadOptions{}); d.Name() != "a modified protocol: seeds 1 (paper 10)" {
		t.Errorf("THV_SEEDS=0: %q", d.Name())
	}
}

// TestNamesAreChecked: a protocol's names of settings and profiles, and
// the texts of its readings, are refused at load when they hold control
// characters or markup, and the error quotes them.
func TestNamesAreChecked(t *testing.T) {
	tiny := tinyYAML(t)
	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(tiny, "  d2: {d: 2,", "  \"d2\\e[2K\\rok\": {d: 2,", 1), `x1b[2k`},
		{strings.Replace(tiny, "  d2: {d: 2,", "  \"<b>d2</b>\": {d: 2,", 1), `settings: the name "<b>d2</b>":`},
		{strings.Replace(tiny, "  short:", "  \"sh|ort\":", 1), `profiles: the name "sh|ort":`},
		{tiny + "readings:\n  settings: [d2]\n  variants:\n    - {name: x, why: \"a\\u202eb\"}\n", `u202eb`},
		{tiny + "readings:\n  settings: [d2]\n  variants:\n    - {name: x, set: [\"min_pulls=`1`\"]}\n", "holds a control character or a backtick"},
	} {
		_, err := loadConfig([]byte(c.yaml), "p.yaml", LoadOptions{}, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) || hasControl(err.Error()) {
			t.Errorf("got %v\nwant %q, and no control character", err, c.want)
		}
	}
}

// TestUnknownEnvironmentVariable: a THV_* variable that names no key of
// the protocol is refused, as --set refuses an unknown key, with the key
// it may have meant; a mapping's name is refused too; the variables thv
// and its scripts read otherwise, and empty ones, pass.
func TestUnknownEnvironmentVariable(t *testing.T) {
	tiny := []byte(tinyYAML(t))
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"THV_SETTINGS_D3_TT", "300"}, "environment THV_SETTINGS_D3_TT is not a key of the protocol (did you mean THV_SETTINGS_D3_T?)"},
		{[]string{"THV_SEEED", "1", "THV_BOGUS", "x"}, "environment THV_BOGUS is not a key of the protocol (and 1 more: THV_SEEED)"},
		{[]string{"THV_SETTINGS", "x"}, "environment THV_SETTINGS names a mapping of the protocol"},
		{[]string{"THV_STORE", "/tmp/x", "THV_REMOTE", "s3://b/p", "THV_PAPER", "p.tex", "THV_SETTINGS_D3_TT", ""}, ""},
	} {
		_, err := loadConfig(tiny, "p.yaml", LoadOptions{}, envOf(c.env...))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v\nwant %q", c.env, err, c.want)
		}
	}
}

// TestDiffersFromPaper: the paper's protocol differs from itself in
// nothing; the quick profile in exactly what params.yaml's profile sets;
// --set shows; where results go (outputs) is not a value of the protocol.
func TestDiffersFromPaper(t *testing.T) {
	paper, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := paper.DiffersFromPaper(); err != nil || len(d) != 0 {
		t.Fatalf("the paper differs from itself: %v, %v", d, err)
	}
	quick, err := Load(LoadOptions{Profile: "quick", Set: []string{"algorithms.THV-UCB.params.delta=0.05", "outputs.results=elsewhere"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := quick.DiffersFromPaper()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range d {
		got[o.Key] = o.Paper + " → " + o.Ours
	}
	want := map[string]string{
		"algorithms.THV-UCB.params.delta": "0 → 0.05",
		"grid_seeds":                      "[0 … 9] (10 values) → [0, 1, 2]",
		"seeds":                           "[0 … 9] (10 values) → [0, 1, 2]",
		"settings.d2.T":                   "2000 → 300", "settings.d3.T": "3000 → 300", "settings.d4.T": "5000 → 300", "settings.d5.T": "5000 → 300",
	}
	if len(got) != len(want) {
		t.Errorf("differences %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if paper.ValuesDigest() == quick.ValuesDigest() {
		t.Error("the quick profile has the paper's digest")
	}
	again, _ := Load(LoadOptions{})
	again.Outputs.Results = "/tmp/elsewhere"
	if paper.ValuesDigest() != again.ValuesDigest() {
		t.Error("where results go changes the protocol's digest")
	}
}
