package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"thv/internal/testenv"
)

// TestReportInBrowser opens the quick profile's results/index.html, as
// thv repro wrote it, in headless Chromium (served from results/ on
// 127.0.0.1): no console error, every link and image inside results/
// resolves and every in-page link has its target, the first screen is
// not blank, the verdict filter works without script, and axe-core
// (injected into the page) finds no serious or critical accessibility
// violation. The page holds no script and names nothing outside results/.
func TestReportInBrowser(t *testing.T) {
	chromium := testenv.LookPath(t, "chromium", "chromium-browser")
	axeJS := filepath.Join("testdata", "consumers", "node_modules", "axe-core", "axe.min.js")
	axe, err := os.ReadFile(axeJS)
	if err != nil {
		testenv.Missing(t, "axe-core is not installed (%v): npm install --prefix cmd/thv/testdata/consumers", err)
	}
	bin, dir := quickLocal(t)
	// Other tests export other comparisons into this project (thv compare
	// --reference): a repro brings back its own.
	thvOK(t, bin, dir, "repro", "--profile", "quick", "-j", "2")
	results := filepath.Join(dir, "results")
	html, err := os.ReadFile(filepath.Join(results, "index.html"))
	if err != nil {
		t.Fatalf("thv repro wrote no results/index.html: %v", err)
	}
	for _, bad := range []string{"<script", "http://", "https://", "src=\"//", "href=\"//", "@import", "url("} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("the page contains %q: it must be self-contained and need no script", bad)
		}
	}
	t.Logf("results/index.html of the quick profile: %d bytes", len(html))

	srv := httptest.NewServer(http.FileServer(http.Dir(results)))
	defer srv.Close()
	ctx := browser(t, chromium)
	var mu sync.Mutex
	var messages []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			mu.Lock()
			messages = append(messages, m.String())
			mu.Unlock()
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/index.html")); err != nil {
		t.Fatalf("navigating to the page: %v", err)
	}
	title := eval[string](t, ctx, `document.title`)
	if !strings.Contains(title, "quick") {
		t.Errorf("title %q", title)
	}

	// Links and images.
	type ref struct {
		Href string `json:"href"`
		OK   bool   `json:"ok"`
	}
	links := eval[[]ref](t, ctx, `[...document.querySelectorAll('a[href]')].map(a => { const h = a.getAttribute('href');
		return {href: h, ok: !h.startsWith('#') || document.getElementById(decodeURIComponent(h.slice(1))) !== null} })`)
	images := eval[[]ref](t, ctx, `[...document.images].map(i => ({href: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0 && i.alt.length > 20}))`)
	if len(images) == 0 || len(links) < 10 {
		t.Fatalf("the page has %d images and %d links", len(images), len(links))
	}
	for _, l := range append(links, images...) {
		switch {
		case !l.OK:
			t.Errorf("%s: its target is missing in the page (or the image did not load, or has no alt text)", l.Href)
		case strings.HasPrefix(l.Href, "#"):
		case strings.Contains(l.Href, ":") || strings.HasPrefix(l.Href, "/") || strings.Contains(l.Href, ".."):
			t.Errorf("%s: a link outside results/", l.Href)
		default:
			resp, err := http.Get(srv.URL + "/" + l.Href)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if _, serr := os.Stat(filepath.Join(results, filepath.FromSlash(l.Href))); resp.StatusCode != http.StatusOK || serr != nil {
				t.Errorf("%s: HTTP %d, %v", l.Href, resp.StatusCode, serr)
			}
		}
	}

	// The first 1280×800 screen leads with the result: the title naming
	// the protocol, the verdict, the command that checks it and the plot
	// of ours against the published values, each wholly inside it, the
	// plot drawn (its verdict colours are in the screenshot's pixels);
	// the provenance is below it.
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	type box struct {
		Sel                      string
		Top, Bottom, Left, Right float64
		Found                    bool
	}
	boxes := eval[[]box](t, ctx, `(window.scrollTo(0, 0), ['h1', 'p.protocol', 'p.verdict', 'p.check', '#plot svg', '#provenance'].map(s => {
		const e = document.querySelector(s); if (!e) return {sel: s, found: false};
		const r = e.getBoundingClientRect(); return {sel: s, found: true, top: r.top, bottom: r.bottom, left: r.left, right: r.right} }))`)
	var plot box
	for _, b := range boxes {
		switch {
		case !b.Found:
			t.Errorf("the page has no %s", b.Sel)
		case b.Sel == "#provenance":
			if b.Top < 800 {
				t.Errorf("the provenance starts at %.0f px, inside the first screen", b.Top)
			}
		case b.Top < 0 || b.Bottom > 800 || b.Left < 0 || b.Right > 1280:
			t.Errorf("%s is at [%.0f, %.0f]×[%.0f, %.0f] px: not wholly in the first 1280×800 screen", b.Sel, b.Left, b.Right, b.Top, b.Bottom)
		}
		if b.Sel == "#plot svg" {
			plot = b
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if sd, dark := spread(t, shot); sd < 20 || dark < 0.01 {
		t.Errorf("the first screen looks blank: luminance SD %.1f, %.2f%% of the pixels dark", sd, 100*dark)
	}
	if n := verdictPixels(t, shot, plot.Left, plot.Top, plot.Right, plot.Bottom); n < 200 {
		t.Errorf("the plot's area of the first screen has %d pixels of a verdict's colour: not drawn", n)
	}
	os.WriteFile(filepath.Join(t.TempDir(), "first-screen.png"), shot, 0o644)
	if title := eval[string](t, ctx, `document.title`); !strings.Contains(title, "a modified protocol: ") {
		t.Errorf("title %q does not name the modified protocol", title)
	}

	// The verdict filter (radio buttons and CSS): only the chosen rows
	// show. (No value of the quick profile is comparable with the paper's:
	// every row is "not comparable".)
	counts := eval[[]int](t, ctx, `(() => { document.getElementById('fv-incomparable').click();
		const rows = [...document.querySelectorAll('#comparison tbody tr')];
		const shown = rows.filter(r => r.getClientRects().length > 0);
		return [rows.filter(r => r.dataset.v === 'incomparable').length, shown.length, shown.filter(r => r.dataset.v !== 'incomparable').length] })()`)
	if counts[0] == 0 || counts[1] != counts[0] || counts[2] != 0 {
		t.Errorf("filter on 'not comparable': %d such rows, %d shown, %d others shown", counts[0], counts[1], counts[2])
	}
	hidden := eval[int](t, ctx, `(document.getElementById('fv-differs').click(), [...document.querySelectorAll('#comparison tbody tr')].filter(r => r.getClientRects().length > 0).length)`)
	if hidden != 0 {
		t.Errorf("filter on 'differs': %d rows shown, none differs", hidden)
	}
	eval[bool](t, ctx, `(document.getElementById('fv-all').click(), true)`)

	// axe-core, injected.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](string(axe))); err != nil {
		t.Fatalf("injecting axe-core: %v", err)
	}
	type violation struct {
		ID, Impact, Help, Target string
		Nodes                    int
	}
	violations := eval[[]violation](t, ctx, `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v =>
		({id: v.id, impact: v.impact || '', help: v.help, nodes: v.nodes.length, target: String(v.nodes[0] && v.nodes[0].target)})))`, chromedp.EvalAwaitPromise)
	for _, v := range violations {
		msg := fmt.Sprintf("axe %s (%s): %s, %d nodes, first %s", v.ID, v.Impact, v.Help, v.Nodes, v.Target)
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
	version := eval[string](t, ctx, `axe.version`)
	// The checks can fail: an image without alt text is a critical
	// violation, and a console error is seen.
	probe := eval[string](t, ctx, `(document.body.appendChild(document.createElement('img')).src = document.images[0].src,
		axe.run(document, {runOnly: ['image-alt']}).then(r => r.violations.map(v => v.impact).join()))`, chromedp.EvalAwaitPromise)
	if probe != "critical" {
		t.Errorf("axe-core did not report an image without alt text as critical: %q", probe)
	}
	eval[bool](t, ctx, `(console.error('thv-probe'), true)`)

	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		seen := slices.Contains(messages, "error: thv-probe")
		mu.Unlock()
		if seen || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(messages, "error: thv-probe") {
		t.Errorf("the console listener missed a console.error: %q", messages)
	}
	for _, m := range messages {
		if (strings.HasPrefix(m, "error") || strings.HasPrefix(m, "exception")) && m != "error: thv-probe" {
			t.Errorf("console: %s", m)
		}
	}
	t.Logf("%d links, %d images, axe-core %s: %d violations, none serious; %d console messages (with the probes)", len(links), len(images), version, len(violations), len(messages))
}

// browser starts headless Chromium with a fresh profile, without any
// connection of its own (this machine may have no network: without these
// flags Chromium waits on them).
func browser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return ctx
}

// eval evaluates a script in the page, with a time limit.
func eval[T any](t *testing.T, ctx context.Context, script string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](script, opts...))
	if err != nil {
		t.Fatalf("%.60s…: %v", script, err)
	}
	return v
}

// verdictPixels counts the pixels of a screenshot, in the rectangle
// given in CSS pixels, whose colour is one of the plot's verdicts'.
func verdictPixels(t *testing.T, shot []byte, left, top, right, bottom float64) int {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	scale := float64(img.Bounds().Dx()) / 1280 // device pixels per CSS pixel
	n := 0
	for y := int(top * scale); y < int(bottom*scale) && y < img.Bounds().Max.Y; y++ {
		for x := int(left * scale); x < int(right*scale) && x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			c := fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
			// the plot's verdict colours (stages/report/plot.go)
			for _, v := range []string{"#1f5fbf", "#c2410c", "#7a7a7a", "#a06c00"} {
				if c == v {
					n++
				}
			}
		}
	}
	return n
}

// spread returns the standard deviation of a PNG's luminance (0–255) and
// the share of its pixels darker than mid-grey.
func spread(t *testing.T, b []byte) (sd, dark float64) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	var sum, sq, n, d float64
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			l := (0.2126*float64(cr) + 0.7152*float64(cg) + 0.0722*float64(cb)) / 257
			sum, sq, n = sum+l, sq+l*l, n+1
			if l < 128 {
				d++
			}
		}
	}
	mean := sum / n
	return math.Sqrt(sq/n - mean*mean), d / n
}

// TestReportQuickBundle: the quick profile (the embedded params.yaml,
// whose lock a bundle renames) bundled: the bundle's page is the
// project's, run block and readings included (its executor is the
// repro's), the crate's preview links it and names the protocol, and
// verify-bundle accepts it, saying it compared the page outside its run
// block and giving that block whole as the author's word.
func TestReportQuickBundle(t *testing.T) {
	bin, dir := quickLocal(t)
	thvOK(t, bin, dir, "repro", "--profile", "quick", "-j", "2") // as in TestReportInBrowser
	path := filepath.Join(t.TempDir(), "quick.tar.gz")
	thvOK(t, bin, dir, "bundle", "--profile", "quick", "--no-image", "-o", path)
	x := filepath.Join(t.TempDir(), "x")
	out, err := run(bin, t.TempDir(), "verify-bundle", path, "--sample", "1", "--dir", x)
	if exitCode(err) != exitSample || !strings.Contains(out, `results/index.html: the page the stored outputs give, byte for byte outside its run block; the run block, stated by the author, not checked: date "`) ||
		!strings.Contains(out, `", thv verify "`) || !strings.Contains(out, "protocol: a modified protocol: grid_seeds 3 (paper 10), seeds 3 (paper 10), settings.d2.T 300 (paper 2000)") {
		t.Fatalf("verify-bundle: exit %d\n%s", exitCode(err), out)
	}
	page := must(os.ReadFile(filepath.Join(x, "results", "index.html")))
	if !bytes.Equal(page, must(os.ReadFile(filepath.Join(dir, "results", "index.html")))) {
		t.Error("the bundle's page is not the project's")
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "readings.parquet")); err == nil && !bytes.Contains(page, []byte(`<section id="readings"`)) {
		t.Error("the project has the readings' table, the bundle's page has no readings")
	}
	if v := pageVerdict.FindSubmatch(page); v == nil || !bytes.Contains(v[1], []byte("no agreement is counted")) || bytes.Contains(v[1], []byte("values agree")) {
		t.Errorf("the quick profile's headline: %s", v)
	}
	if title := pageTitle.FindSubmatch(page); title == nil || !bytes.Contains(title[1], []byte("(profile quick): a modified protocol: grid_seeds 3 (paper 10)")) {
		t.Errorf("the quick profile's title: %s", title)
	}
	if preview := must(os.ReadFile(filepath.Join(x, "ro-crate-preview.html"))); !bytes.Contains(preview, []byte("<p><strong>Protocol: a modified protocol: grid_seeds 3 (paper 10), seeds 3 (paper 10), settings.d2.T 300 (paper 2000)")) {
		t.Error("the crate's preview does not name the modified protocol")
	}
	if !bytes.Contains(page, []byte(`<th scope="row">executor</th><td>local</td>`)) {
		t.Error("the page does not name the repro's executor")
	}

	// thv verify's verdict reaches the page through thv report, and the
	// executor stays the repro's.
	thvExit(t, bin, dir, exitSample, "verify", "--profile", "quick", "--sample", "3", "--skip-store")
	if out := thvOK(t, bin, dir, "report", "--profile", "quick"); !strings.Contains(out, "index.html") {
		t.Fatalf("thv report: %s", out)
	}
	page = must(os.ReadFile(filepath.Join(dir, "results", "index.html")))
	for _, want := range []string{"tasks re-executed", "every output identical", `<th scope="row">executor</th><td>local</td>`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("after thv verify and thv report, the page has no %q", want)
		}
	}
}
