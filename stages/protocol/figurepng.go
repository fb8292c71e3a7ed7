package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"

	"thv/artifacts"
	"thv/pipeline"
	"thv/stages/figures"
	"thv/stages/report"
	"thv/stages/stage"
)

// figurePNG is a PNG of results/figures/: drawn at export from the curves
// output of a figures task (figures.RenderPNG), not a copy of a store
// object. Its bytes depend on the CPU that draws it (the rasteriser's
// floating point), its data does not: the curves are in the lock.
type figurePNG struct {
	name       string           // "<setting>.png"
	curvesName string           // "<setting>.curves.parquet"
	curves     artifacts.Digest // that output's digest
	params     []byte           // the task's params (JSON)
}

// figurePNGOf describes the PNG of a figures task's result.
func figurePNGOf(r *pipeline.Result) (figurePNG, error) {
	params, err := json.Marshal(r.Task.Params)
	if err != nil {
		return figurePNG{}, fmt.Errorf("%s: params: %w", r.Task.ID, err)
	}
	p, err := stage.Decode[figures.Params](params)
	if err != nil {
		return figurePNG{}, fmt.Errorf("%s: %w", r.Task.ID, err)
	}
	if err := pipeline.ValidName(p.PNGName()); err != nil {
		return figurePNG{}, fmt.Errorf("%s: PNG %w", r.Task.ID, err)
	}
	d, ok := r.Outputs.Get(p.CurvesOutput())
	if !ok {
		return figurePNG{}, fmt.Errorf("%s has no output %q to draw its PNG from", r.Task.ID, p.CurvesOutput())
	}
	return figurePNG{name: p.PNGName(), curvesName: p.CurvesOutput(), curves: d, params: params}, nil
}

// source names what the PNG is drawn from, in its stamp and in
// results/README.md: "<setting>.curves.parquet sha256:…".
func (f figurePNG) source() string { return f.curvesName + " " + f.curves.String() }

// current reports whether b, a file's content, is this PNG as drawn:
// stamped with f's curves and its image data unedited. On another CPU's
// drawing of the same curves it is true too (that is the point: nothing to
// redo).
func (f figurePNG) current(b []byte) bool {
	stamp, want, err := readPNGStamp(b, f.source())
	return err == nil && stamp == want
}

// draw renders the PNG from the store's copy of the curves, stamped.
func (f figurePNG) draw(st *artifacts.Store) ([]byte, error) {
	curves, err := st.Get(f.curves)
	if err != nil {
		return nil, err
	}
	b, err := figures.RenderPNG(f.params, curves)
	if err != nil {
		return nil, fmt.Errorf("drawing %s: %w", f.name, err)
	}
	return stampPNG(b, f.source())
}

// How far a PNG drawn from the same curves on another CPU may be from this
// machine's drawing: per colour channel, and in the share of pixels that
// differ at all. The rasterisers of the CPUs we test differ by 1/255 on a
// few anti-aliased edge pixels (docs/reproducibility.md); a figure drawn
// from other data differs along whole curves.
const (
	pngMaxChannelDelta = 4      // of 255
	pngMaxDifferingPix = 0.0005 // of all pixels
)

// SameResult judges got, a file of results/ that another export wrote at
// path rel (a bundle's), against want, this export's from the same store.
// A copy of a store object must be byte-identical. A PNG drawn at export
// may have been drawn on another CPU: it must name the same curves in its
// stamp, its image data must be unedited, and its pixels must be within
// the tolerance above of want's; note then says how far they are. A PNG
// identical to want gives no note. The page, index.html, must be want
// outside its run block, and that block in its form (report.Same); note
// then says what the block states, every row, as the author's word.
func SameResult(rel string, want, got []byte) (note string, err error) {
	if bytes.Equal(want, got) {
		return "", nil
	}
	if rel == ReportName {
		// The page: every byte but its run block (report.Same).
		run, err := report.Same(want, got)
		if err != nil {
			return "", fmt.Errorf("results/%s: %w", rel, err)
		}
		return fmt.Sprintf("results/%s: the page the stored outputs give, byte for byte outside its run block; the run block, stated by the author, not checked: date %q, executor %q, thv %q, thv verify %q",
			rel, run.Date, run.Executor, run.Thv, run.Verify), nil
	}
	wantStamp, _, serr := readPNGStamp(want, "")
	source, _, drawn := strings.Cut(strings.TrimPrefix(wantStamp, "drawn by thv from "), "; image data ")
	if serr != nil || !drawn {
		return "", fmt.Errorf("results/%s differs from the store's output it should copy", rel)
	}
	stamp, expected, err := readPNGStamp(got, source)
	switch {
	case err != nil:
		return "", fmt.Errorf("results/%s: %w", rel, err)
	case stamp == "":
		return "", fmt.Errorf("results/%s carries no stamp naming the curves it is drawn from (%s)", rel, source)
	case stamp != expected:
		return "", fmt.Errorf("results/%s is not the drawing of %s it should be: its stamp says %q", rel, source, stamp)
	}
	n, delta, total, gotImage, err := pixelsApart(want, got)
	if err != nil {
		return "", fmt.Errorf("results/%s: %w", rel, err)
	}
	if delta > pngMaxChannelDelta || float64(n) > pngMaxDifferingPix*float64(total) {
		return "", fmt.Errorf("results/%s: %d of %d pixels differ, by up to %d/255, from this machine's drawing of %s: more than another CPU's rasteriser explains (at most %d/255 on %.2g%% of the pixels)",
			rel, n, total, delta, source, pngMaxChannelDelta, 100*pngMaxDifferingPix)
	}
	// Every other byte: the file must be the PNG thv writes of those
	// pixels, stamped, so that no chunk, text or trailing byte rides along
	// unchecked.
	var canonical bytes.Buffer
	if err := png.Encode(&canonical, gotImage); err != nil {
		return "", fmt.Errorf("results/%s: %w", rel, err)
	}
	stamped, err := stampPNG(canonical.Bytes(), source)
	if err != nil {
		return "", fmt.Errorf("results/%s: %w", rel, err)
	}
	if !bytes.Equal(stamped, got) {
		return "", fmt.Errorf("results/%s holds more than its pixels and its stamp: it is not the PNG thv writes of its image (other chunks, another encoding, or bytes after its end)", rel)
	}
	return fmt.Sprintf("results/%s: drawn from %s on another CPU; %d of %d pixels differ from this machine's drawing, by at most %d/255", rel, source, n, total, delta), nil
}

// pixelsApart decodes two PNGs of the same size, a this machine's drawing
// and b another's, and counts the pixels that differ, with the largest
// difference of a colour channel (8 bits); it returns b's image. b's size
// is read from its header before any pixel is decoded: a PNG declaring
// another size (a huge one would exhaust memory) is refused unread.
func pixelsApart(a, b []byte) (differing int, maxDelta uint32, total int, bImage image.Image, err error) {
	ca, err := png.DecodeConfig(bytes.NewReader(a))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	cb, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	if ca.Width != cb.Width || ca.Height != cb.Height {
		return 0, 0, 0, nil, fmt.Errorf("%d×%d pixels, this machine's drawing %d×%d", cb.Width, cb.Height, ca.Width, ca.Height)
	}
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	r := ia.Bounds()
	if ib.Bounds() != r {
		return 0, 0, 0, nil, fmt.Errorf("%d×%d pixels, this machine's drawing %d×%d", ib.Bounds().Dx(), ib.Bounds().Dy(), r.Dx(), r.Dy())
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			d := channelDelta(ia, ib, image.Pt(x, y))
			if d > 0 {
				differing++
				maxDelta = max(maxDelta, d)
			}
		}
	}
	return differing, maxDelta, r.Dx() * r.Dy(), ib, nil
}

// channelDelta is the largest difference of one 8-bit channel (R, G, B or
// A) between the two images at p.
func channelDelta(a, b image.Image, p image.Point) uint32 {
	r1, g1, b1, a1 := a.At(p.X, p.Y).RGBA()
	r2, g2, b2, a2 := b.At(p.X, p.Y).RGBA()
	var d uint32
	for _, c := range [...][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
		x, y := c[0]>>8, c[1]>>8
		d = max(d, max(x, y)-min(x, y))
	}
	return d
}
