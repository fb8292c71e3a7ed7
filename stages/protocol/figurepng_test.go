package protocol

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"thv/pipeline"
)

// TestExportDrawsThePNGFromTheCurves: no task outputs a PNG; the export
// draws results/figures/<setting>.png from the figures task's curves,
// stamps it with their digest, names them in the README, does not redraw
// a current PNG, and redraws an edited one to the same bytes.
func TestExportDrawsThePNGFromTheCurves(t *testing.T) {
	dir := t.TempDir()
	p := tiny(t, dir, nil)
	rep := repro(t, p, pipeline.Options{})
	var fig *pipeline.Result
	for _, r := range rep.Results {
		for _, o := range r.Outputs {
			if strings.HasSuffix(o.Name, ".png") {
				t.Errorf("task %s outputs %s: no task may output a PNG", r.Task.ID, o.Name)
			}
		}
		if r.Task.ID == "figures/d2" {
			fig = r
		}
	}
	if fig == nil || len(fig.Outputs) != 2 {
		t.Fatalf("figures/d2: %+v", fig)
	}
	curves, ok := fig.Outputs.Get("d2.curves.parquet")
	if _, pdf := fig.Outputs.Get("d2.pdf"); !ok || !pdf {
		t.Fatalf("figures/d2 outputs %v", fig.Outputs)
	}
	figs := filepath.Join(dir, "results", "figures")
	pngPath := filepath.Join(figs, "d2.png")
	drawn, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	source := "d2.curves.parquet " + curves.String()
	if stamp, want, err := readPNGStamp(drawn, source); err != nil || stamp == "" || stamp != want {
		t.Errorf("stamp %q, want %q (%v)", stamp, want, err)
	}
	decoded, err := png.Decode(bytes.NewReader(drawn))
	if err != nil {
		t.Errorf("the stamped PNG does not decode: %v", err)
	}
	// The drawing is the canonical PNG of its pixels (what SameResult
	// requires of another CPU's drawing): encoded again and stamped, the
	// same bytes.
	var again bytes.Buffer
	if err := png.Encode(&again, decoded); err != nil {
		t.Fatal(err)
	}
	if canonical, err := stampPNG(again.Bytes(), source); err != nil || !bytes.Equal(canonical, drawn) {
		t.Errorf("the drawing is not the canonical PNG of its pixels (%v)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(figs, "d2.curves.parquet")); len(b) == 0 {
		t.Error("the curves are not exported")
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "results", "README.md"))
	if !strings.Contains(string(readme), "| `figures/d2.png` |") || !strings.Contains(string(readme), "`d2.curves.parquet` "+curves.String()) {
		t.Errorf("README does not name the curves of d2.png:\n%s", readme)
	}
	drawnResults, err := DrawnResults(rep)
	if err != nil || len(drawnResults) != 2 || drawnResults["figures/d2.png"] != curves {
		t.Errorf("DrawnResults = %v, %v", drawnResults, err)
	}

	if written, err := p.ExportResults(rep); err != nil || len(written) != 0 {
		t.Errorf("a second export wrote %v (%v)", written, err)
	}
	edited := bytes.Clone(drawn)
	edited[len(edited)/2] ^= 1
	if err := os.WriteFile(pngPath, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := p.ExportResults(rep)
	if err != nil || len(written) != 1 || written[0] != pngPath {
		t.Fatalf("export after an edit wrote %v (%v)", written, err)
	}
	if again, _ := os.ReadFile(pngPath); !bytes.Equal(again, drawn) {
		t.Error("the redrawn PNG differs from the first drawing")
	}
}

// TestSameResult: a bundle's results file against this machine's export.
// Copies must be byte-identical; a PNG may come from another CPU's
// rasteriser (a few pixels 1/255 apart) but must name the same curves, be
// unedited since it was stamped, and stay within the tolerance.
func TestSameResult(t *testing.T) {
	const source = "d2.curves.parquet sha256:0123"
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for x := 20; x < 380; x++ { // a curve
		img.Set(x, 150+x/20, color.RGBA{0xd6, 0x27, 0x28, 0xff})
	}
	encode := func(im *image.RGBA, source string) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, im); err != nil {
			t.Fatal(err)
		}
		s, err := stampPNG(b.Bytes(), source)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	edit := func(f func(im *image.RGBA)) *image.RGBA {
		c := *img
		c.Pix = bytes.Clone(img.Pix)
		f(&c)
		return &c
	}
	want := encode(img, source)
	otherCPU := encode(edit(func(im *image.RGBA) { im.Pix[4*(150*400+30)]--; im.Pix[4*(151*400+200)+1]-- }), source)
	otherData := encode(edit(func(im *image.RGBA) {
		for x := 20; x < 380; x++ {
			im.Set(x, 160+x/20, color.RGBA{0xd6, 0x27, 0x28, 0xff})
		}
	}), source)
	slightlyOff := encode(edit(func(im *image.RGBA) { // one level on every pixel
		for i := range im.Pix {
			if i%4 == 0 {
				im.Pix[i]--
			}
		}
	}), source)
	tampered := bytes.Clone(otherCPU)
	chunks, _ := pngChunks(tampered)
	for _, c := range chunks {
		if c.typ == "IDAT" {
			tampered[c.start+8+len(c.data)/2] ^= 0x10
			break
		}
	}
	wantChunks, _ := pngChunks(want) // …, IDAT, the stamp, IEND
	unstamped := bytes.Clone(want[:wantChunks[len(wantChunks)-2].start])
	unstamped = append(unstamped, want[wantChunks[len(wantChunks)-1].start:]...)

	// Bytes beside the pixels and the stamp: a text chunk claiming
	// anything, bytes after IEND, a header declaring a huge image (whose
	// decoding would take gigabytes).
	otherChunks, _ := pngChunks(otherCPU)
	iend := otherChunks[len(otherChunks)-1].start
	text := "Comment\x00verified by the authors"
	comment := append(binary.BigEndian.AppendUint32(nil, uint32(len(text))), "tEXt"+text...)
	comment = binary.BigEndian.AppendUint32(comment, crc32.ChecksumIEEE(comment[4:]))
	withText := append(append(bytes.Clone(otherCPU[:iend]), comment...), otherCPU[iend:]...)
	trailing := append(bytes.Clone(otherCPU), "claims"...)
	huge := bytes.Clone(otherCPU)
	binary.BigEndian.PutUint32(huge[16:], 1<<20) // IHDR's width and height
	binary.BigEndian.PutUint32(huge[20:], 1<<20)
	binary.BigEndian.PutUint32(huge[29:], crc32.ChecksumIEEE(huge[12:29]))

	if note, err := SameResult("figures/d2.png", want, want); note != "" || err != nil {
		t.Errorf("identical: %q, %v", note, err)
	}
	note, err := SameResult("figures/d2.png", want, otherCPU)
	if err != nil || !strings.Contains(note, "2 of 120000 pixels differ from this machine's drawing, by at most 1/255") || !strings.Contains(note, source) {
		t.Errorf("another CPU's drawing: %q, %v", note, err)
	}
	cases := map[string]struct {
		got  []byte
		want string
	}{
		"other data":      {otherData, "360 of 120000 pixels differ, by up to 216/255, from this machine's drawing of " + source},
		"every pixel off": {slightlyOff, "120000 of 120000 pixels differ, by up to 1/255"},
		"other curves":    {encode(img, "d2.curves.parquet sha256:4567"), "is not the drawing of " + source + " it should be: its stamp says \"drawn by thv from d2.curves.parquet sha256:4567;"},
		"edited":          {tampered, "is not the drawing of " + source},
		"no stamp":        {unstamped, "carries no stamp naming the curves it is drawn from (" + source + ")"},
		"not a PNG":       {[]byte("GIF89a"), "results/figures/d2.png: not a PNG file"},
		"a text chunk":    {withText, "holds more than its pixels and its stamp"},
		"trailing bytes":  {trailing, "holds more than its pixels and its stamp"},
		"huge":            {huge, "1048576×1048576 pixels, this machine's drawing 400×300"},
	}
	for name, c := range cases {
		if note, err := SameResult("figures/d2.png", want, c.got); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error containing %q", name, note, err, c.want)
		}
	}
	if _, err := SameResult("tables/all.tex", []byte("a"), []byte("b")); err == nil || err.Error() != "results/tables/all.tex differs from the store's output it should copy" {
		t.Errorf("a copy that differs: %v", err)
	}
}
