package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// verifyBundleJSON runs verify-bundle --json and decodes its object; it
// returns the object, the exit status and stderr (the text report).
func verifyBundleJSON(t *testing.T, bin, path string, args ...string) (checkJSON, int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"verify-bundle", path, "--json"}, args...)...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var j checkJSON
	if jerr := json.Unmarshal(stdout.Bytes(), &j); jerr != nil {
		t.Fatalf("verify-bundle --json: stdout is not one JSON object: %v\n%s\nstderr:\n%s", jerr, stdout.String(), stderr.String())
	}
	return j, exitCode(err), stderr.String()
}

// extracted runs verify-bundle --dir on the bundle (a sample: what is
// read here is the extracted files) and returns the directory.
func extracted(t *testing.T, bin, path string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "x")
	if out, err := run(bin, t.TempDir(), "verify-bundle", path, "--sample", "1", "--dir", dir); exitCode(err) != exitSample {
		t.Fatalf("verify-bundle --sample 1 --dir: exit %d, want %d\n%s", exitCode(err), exitSample, out)
	}
	return dir
}

var pageVerdict = regexp.MustCompile(`<p class="verdict"><strong>Verdict:</strong> ([^<]*)`)
var pageTitle = regexp.MustCompile(`<title>([^<]*)</title>`)

// namesModified checks every place a bundle shows its verdict: the
// verdict of verify-bundle, its JSON, the page's title and headline and
// the crate's preview each name the protocol as modified with the values
// given; comparable reports whether the headline may count agreements.
func namesModified(t *testing.T, bin, path string, values []string, comparable bool, headline string) {
	t.Helper()
	j, code, text := verifyBundleJSON(t, bin, path)
	if code != exitVerified || j.Outcome != outcomeVerified || j.Exit != exitVerified || j.Protocol == nil || j.Protocol.Paper {
		t.Fatalf("verify-bundle --json: exit %d, %+v\n%s", code, j, text)
	}
	if !strings.Contains(j.Message, "bundle verified: ") || !strings.Contains(j.Message, "(a modified protocol: ") || !strings.Contains(text, j.Message) {
		t.Errorf("the verdict does not name the protocol: %q", j.Message)
	}
	if !strings.Contains(j.Against, headline) || !strings.Contains(text, "against the paper: "+j.Against) {
		t.Errorf("the verdict against the paper %q has no %q", j.Against, headline)
	}
	if strings.Contains(j.Against, "published values agree") != comparable {
		t.Errorf("the verdict against the paper counts agreements: %v, want %v: %s", !comparable, comparable, j.Against)
	}
	runBlock := false
	for _, it := range j.Items {
		runBlock = runBlock || it.Item == "results/index.html's run block" && it.Status == "not checked" && strings.Contains(it.Reason, "stated by the author, not checked: date")
	}
	if !runBlock || j.RunBlock == nil || j.RunBlock.Status != runStated {
		t.Errorf("the run block is not named as the author's word: %+v %+v", j.Items, j.RunBlock)
	}
	dir := extracted(t, bin, path)
	page := string(must(os.ReadFile(filepath.Join(dir, "results", "index.html"))))
	preview := string(must(os.ReadFile(filepath.Join(dir, "ro-crate-preview.html"))))
	title := pageTitle.FindStringSubmatch(page)
	verdict := pageVerdict.FindStringSubmatch(page)
	if title == nil || verdict == nil {
		t.Fatalf("the page has no title or verdict")
	}
	if !strings.Contains(title[1], "a modified protocol: ") || !strings.Contains(preview, "<p><strong>Protocol: a modified protocol: ") {
		t.Errorf("title %q; the preview names no modified protocol", title[1])
	}
	if !strings.HasPrefix(j.Protocol.Name, "a modified protocol: ") || !strings.HasPrefix(verdict[1], "A modified protocol: ") {
		t.Errorf("the protocol is not named as modified: JSON %q, the page's headline %q", j.Protocol.Name, verdict[1])
	}
	for _, v := range values {
		if !strings.Contains(j.Protocol.Name, v) || !strings.Contains(verdict[1], strings.ReplaceAll(v, "'", "&#39;")) || !strings.Contains(preview, v) {
			t.Errorf("%q is not in the JSON's protocol (%s), the page's headline (%s) and the preview", v, j.Protocol.Name, verdict[1])
		}
	}
	if strings.Contains(verdict[1], "published values agree") != comparable || !strings.Contains(verdict[1], strings.ReplaceAll(headline, "'", "&#39;")) {
		t.Errorf("the page's headline: %s", verdict[1])
	}
}

// TestModifiedProtocolIsNamed: bundles of a modified protocol — the tiny
// one (smaller T, n, k: no published value comparable) and one of the
// paper's d = 2 setting with 2 seeds (comparable, judged with less
// precision) — name it as modified with its differing values in every
// place a verdict is shown, and count agreements only where values are
// comparable; thv compare on the smaller T counts none and exits 3.
func TestModifiedProtocolIsNamed(t *testing.T) {
	bin, tiny := tinyBundle(t)
	t.Run("smaller T", func(t *testing.T) {
		namesModified(t, bin, tiny, []string{"settings.d2.T 120 (paper 2000)", "settings.d2.n 12 (paper 36)"}, false, "no agreement is counted")
		project := filepath.Join(filepath.Dir(bin), "tiny-project")
		cmd := exec.Command(bin, "compare", "--params", tinyParams(t))
		cmd.Dir = project
		out, err := cmd.CombinedOutput()
		// 1: most published values are missing from the tiny protocol
		// (--fail-on values fails on a missing value); none is judged.
		if exitCode(err) != exitRejected || !strings.Contains(string(out), "verdict: A modified protocol: ") || !strings.Contains(string(out), "no agreement is counted") ||
			strings.Contains(string(out), "values agree") {
			t.Errorf("thv compare on the tiny protocol: exit %d\n%s", exitCode(err), out)
		}
	})
	t.Run("fewer seeds", func(t *testing.T) {
		project := t.TempDir()
		params := filepath.Join(moduleRoot(t), "cmd", "thv", "testdata", "few-seeds.yaml")
		thvOK(t, bin, project, "repro", "--params", params, "-j", "2")
		path := filepath.Join(t.TempDir(), "few.tar.gz")
		thvOK(t, bin, project, "bundle", "--params", params, "--no-image", "-o", path)
		namesModified(t, bin, path, []string{"seeds 2 (paper 10)", "settings.d3 absent (paper present)"}, true,
			"Judged with 2 seeds per cell instead of the paper's 10: wider intervals agree more easily.")
	})
}

// TestVerifyBundleExitCodes: each outcome of verify-bundle has its exit
// status: verified 0, rejected 1, a missing bundle 2, not checked (this
// machine cannot extract it) 3, a sample 4, interrupted 130.
func TestVerifyBundleExitCodes(t *testing.T) {
	bin, path := tinyBundle(t)
	if j, code, text := verifyBundleJSON(t, bin, path); code != exitVerified || j.Outcome != "verified" {
		t.Errorf("an honest bundle: exit %d, %s\n%s", code, j.Outcome, text)
	}
	if j, code, _ := verifyBundleJSON(t, bin, path, "--sample", "2"); code != exitSample || j.Outcome != "sample agreed" || j.Sample == nil || j.Sample.Tasks != 2 {
		t.Errorf("a sample: exit %d, %+v", code, j)
	}
	forged := filepath.Join(t.TempDir(), "forged.tar.gz")
	writeBundle(t, forged, editEntry(t, readBundle(t, path), "results/tables/all.tex", func(b []byte) []byte { return append(b, '%') }))
	if j, code, _ := verifyBundleJSON(t, bin, forged); code != exitRejected || j.Outcome != "rejected" || !strings.Contains(j.Message, "rejected") {
		t.Errorf("a forged bundle: exit %d, %+v", code, j)
	}
	if j, code, _ := verifyBundleJSON(t, bin, filepath.Join(t.TempDir(), "nothing.tar.gz")); code != exitUsage || j.Exit != exitUsage {
		t.Errorf("a missing bundle: exit %d, %+v", code, j)
	}
	t.Run("not checked", func(t *testing.T) {
		ro := readOnlyDir(t) // this machine's fault, not the bundle's
		if j, code, _ := verifyBundleJSON(t, bin, path, "--dir", filepath.Join(ro, "x")); code != exitNotChecked || j.Outcome != "not checked" || !strings.Contains(j.Message, "not checked") {
			t.Errorf("a read-only file system to extract on: exit %d, %+v", code, j)
		}
	})
	// Interrupted: SIGINT once the manifest is checked.
	cmd := exec.Command(bin, "verify-bundle", path, "-j", "1")
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "manifest: ") {
			once.Do(func() { cmd.Process.Signal(syscall.SIGINT) })
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 130 {
			t.Errorf("interrupted: exit %d, want 130\n%s", code, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("verify-bundle did not stop after SIGINT")
	}
}

// TestVerifyJSON: thv verify --json prints one object a script decodes:
// the outcome, its exit status, the protocol, the counts per kind.
func TestVerifyJSON(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)
	lockBytes, _ := os.ReadFile(filepath.Join(dir, tinyLock))
	records := strings.Count(string(lockBytes), "\n"+`{"id":`) // every task: the plan's and the ones expansion added
	for _, c := range []struct {
		args    []string
		outcome string
		code    int
	}{{nil, "verified", exitVerified}, {[]string{"--sample", "3"}, "sample agreed", exitSample}} {
		cmd := exec.Command(bin, append([]string{"verify", "--params", tinyParams(t), "--json"}, c.args...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		var j checkJSON
		if jerr := json.Unmarshal(out, &j); jerr != nil || exitCode(err) != c.code || j.Outcome != c.outcome || j.Exit != c.code ||
			j.Protocol == nil || j.Protocol.Paper || len(j.Kinds) == 0 || j.Tasks != records {
			t.Errorf("verify --json %v: exit %d, %v, %+v", c.args, exitCode(err), jerr, j)
		}
	}
}

// TestOverridesLeaveThePapersLockAlone: thv repro with --set or THV_*
// overrides that change the protocol writes the lock of that protocol
// (named after it, recording its digest and differences), never thv.lock,
// which stays byte-identical; both ways of overriding name the same lock.
func TestOverridesLeaveThePapersLockAlone(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	paper := must(os.ReadFile(filepath.Join(moduleRoot(t), "thv.lock")))
	os.WriteFile(filepath.Join(dir, "thv.lock"), paper, 0o644)
	// A small protocol by overrides: one seed, one geometry, one
	// algorithm, small settings.
	algorithms := "[{name: THV-UCB, eta: [0.1], params: {delta: 0, clip: 1}}, {name: RandomK, params: {once: 1}}]"
	sets := []string{"seeds=[0]", "grid_seeds=[0]", "geometries=[linear]", "algorithms=" + algorithms}
	env := []string{"THV_SEEDS=[0]", "THV_GRID_SEEDS=[0]", "THV_GEOMETRIES=[linear]", "THV_ALGORITHMS=" + algorithms}
	for _, s := range []string{"d2", "d3", "d4", "d5"} {
		sets = append(sets, "settings."+s+".n=12", "settings."+s+".k=2", "settings."+s+".T=100")
		env = append(env, "THV_SETTINGS_"+strings.ToUpper(s)+"_N=12", "THV_SETTINGS_"+strings.ToUpper(s)+"_K=2", "THV_SETTINGS_"+strings.ToUpper(s)+"_T=100")
	}
	args := []string{"repro", "-j", "2"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out := thvOK(t, bin, dir, args...)
	lockLine := regexp.MustCompile(`lock (\S+/thv\.set-[0-9a-f]{8}\.lock)\n`).FindStringSubmatch(out)
	if lockLine == nil || !strings.Contains(out, "protocol: a modified protocol: ") {
		t.Fatalf("thv repro --set: no lock of its own named, or no protocol:\n%s", out)
	}
	if !bytes.Equal(must(os.ReadFile(filepath.Join(dir, "thv.lock"))), paper) {
		t.Fatal("thv repro --set rewrote thv.lock")
	}
	head := string(must(os.ReadFile(lockLine[1])))[:2000]
	if !strings.Contains(head, `"protocol": {"digest":"sha256:`) || !strings.Contains(head, `"seeds 1 (paper 10)"`) {
		t.Errorf("the lock records no protocol digest and differences:\n%s", head)
	}
	cmd := exec.Command(bin, "repro", "-j", "2")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "lock "+lockLine[1]+"\n") || !strings.Contains(string(b), " 0 executed,") {
		t.Fatalf("THV_* overrides: %v, want the same lock, nothing executed\n%s", err, b)
	}
	if !bytes.Equal(must(os.ReadFile(filepath.Join(dir, "thv.lock"))), paper) {
		t.Fatal("THV_* overrides rewrote thv.lock")
	}
}

// TestUnwritableOutputFoundFirst: a results directory that cannot be
// written is found before any task runs: the error says so, and the store
// holds no object.
func TestUnwritableOutputFoundFirst(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "results"), []byte("a file where results/ should be"), 0o644)
	cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "-j", "2")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the results directory cannot be made") || !strings.Contains(string(out), "nothing has run") {
		t.Fatalf("results/ a file: %v\n%s", err, out)
	}
	if n := objectCount(filepath.Join(dir, ".thv")); n != 0 {
		t.Errorf("%d objects in the store: tasks ran before the check", n)
	}
	if os.Geteuid() != 0 { // root writes anywhere: a read-only directory stops only others
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "--store", filepath.Join(t.TempDir(), "store"))
		cmd.Dir = ro
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "the lock's directory") {
			t.Errorf("a read-only project: %v\n%s", err, out)
		}
	}
}

// TestVersionCompletionAndEnvironment: thv --version names the module's
// version, the toolchain and the code fingerprint; cobra's completion
// scripts are there; an unknown THV_* variable is an error, as an unknown
// --set key is.
func TestVersionCompletionAndEnvironment(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	out := thvOK(t, bin, t.TempDir(), "--version")
	if !regexp.MustCompile(`^thv \S.*\n(module sum \S+\n)?go1\.\S+ \w+/\w+\ncode fingerprint [0-9a-f]{64}\n$`).MatchString(out) {
		t.Errorf("thv --version:\n%s", out)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out := thvOK(t, bin, t.TempDir(), "completion", shell); !strings.Contains(out, "thv") || len(out) < 1000 {
			t.Errorf("thv completion %s: %d bytes", shell, len(out))
		}
	}
	cmd := exec.Command(bin, "status", "--params", tinyParams(t))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "THV_SETTINGS_D3_TT=300")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "environment THV_SETTINGS_D3_TT is not a key of the protocol (did you mean THV_SETTINGS_D3_T?)") {
		t.Errorf("an unknown THV_* variable: %v\n%s", err, out)
	}
	cmd = exec.Command(bin, "status", "--params", tinyParams(t), "--bogus")
	if _, err := cmd.CombinedOutput(); exitCode(err) != exitUsage {
		t.Errorf("an unknown flag: exit %d, want %d", exitCode(err), exitUsage)
	}
}

// TestUntrustedNamesAndRunBlock: a bundle's protocol is untrusted input.
// A setting named with a carriage return and an escape sequence (which
// once made a rejected bundle display as "bundle verified"), or with
// markup, is refused when the protocol loads, and nothing thv prints
// holds a control character. A run block stating "bundle verified by thv
// verify-bundle" and an "official release" is shown whole, every row, as
// the author's word.
func TestUntrustedNamesAndRunBlock(t *testing.T) {
	bin, path := tinyBundle(t)
	honest := readBundle(t, path)
	for name, key := range map[string]string{
		"control characters": `"d2\r\e[2Kbundle verified: \e[8m"`,
		"markup":             `"<img src=x onerror=alert(1)>"`,
	} {
		es := readBundle(t, path)
		params := string(entryData(t, honest, "tiny.yaml"))
		setFile(t, es, "tiny.yaml", []byte(strings.Replace(params, "  d2: {d: 2,", "  "+key+": {d: 2,", 1)))
		forged := filepath.Join(t.TempDir(), "forged.tar.gz")
		writeBundle(t, forged, es)
		cmd := exec.Command(bin, "verify-bundle", forged)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if exitCode(err) != exitRejected || !strings.Contains(string(out), "rejected: its protocol: ") || !strings.Contains(string(out), "settings: the name ") {
			t.Errorf("%s in a setting's name: exit %d\n%s", name, exitCode(err), out)
		}
		if bytes.ContainsAny(out, "\r\x1b") || strings.Contains(string(out), "bundle verified") && name == "markup" {
			t.Errorf("%s: the output holds a control character or a false verdict: %q", name, out)
		}
	}

	// A path the protocol names stays in the bundle.
	es := readBundle(t, path)
	setFile(t, es, "tiny.yaml", []byte(strings.Replace(string(entryData(t, honest, "tiny.yaml")), "  results: results", "  results: ../../elsewhere", 1)))
	outside := filepath.Join(t.TempDir(), "outside.tar.gz")
	writeBundle(t, outside, es)
	if out, err := run(bin, t.TempDir(), "verify-bundle", outside); exitCode(err) != exitRejected || !strings.Contains(out, `its protocol's outputs.results "../../elsewhere" leaves the bundle's directory`) {
		t.Errorf("outputs.results outside the bundle: exit %d\n%s", exitCode(err), out)
	}

	es = readBundle(t, path)
	page := string(entryData(t, es, "results/index.html"))
	page = regexp.MustCompile(`<tr><th scope="row">thv</th><td>[^<]*</td></tr>`).ReplaceAllString(page, `<tr><th scope="row">thv</th><td>thv v1.0.0 (official release, reviewed)</td></tr>`)
	page = regexp.MustCompile(`<tr><th scope="row">thv verify</th><td>[^<]*</td></tr>`).ReplaceAllString(page, `<tr><th scope="row">thv verify</th><td>2026-01-01: bundle verified by thv verify-bundle, every task</td></tr>`)
	setFile(t, es, "results/index.html", []byte(page))
	es = reseal(t, es) // the crate and the manifest as thv writes them for the edited page
	claims := filepath.Join(t.TempDir(), "claims.tar.gz")
	writeBundle(t, claims, es)
	j, code, text := verifyBundleJSON(t, bin, claims)
	want := `stated by the author, not checked: date "`
	if code != exitVerified || j.RunBlock == nil || j.RunBlock.Thv != "thv v1.0.0 (official release, reviewed)" || j.RunBlock.Status != runStated ||
		!strings.Contains(text, want) || !strings.Contains(text, `thv "thv v1.0.0 (official release, reviewed)", thv verify "2026-01-01: bundle verified by thv verify-bundle, every task"`) {
		t.Errorf("run-block claims: exit %d, %+v\n%s", code, j.RunBlock, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "official release") && !strings.Contains(line, want) {
			t.Errorf("a claim of the run block printed outside the author's word: %s", line)
		}
	}
}
