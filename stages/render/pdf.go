package render

import (
	"bytes"
	"fmt"
	"image/color"
	"regexp"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// pdfOutlines is the vgpdf canvas with text drawn as filled glyph outlines
// instead of embedded fonts (see the package doc).
type pdfOutlines struct {
	*vgpdf.Canvas
	buf sfnt.Buffer
}

// SetColor works around vgpdf treating the alpha-premultiplied components
// returned by color.Color.RGBA as straight RGB (a translucent colour would
// come out darkened, e.g. grey bands): it hands vgpdf a colour whose RGBA
// method returns the straight (non-premultiplied) components.
func (c *pdfOutlines) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.Canvas.SetColor(straightColor(color.NRGBAModel.Convert(clr).(color.NRGBA)))
}

// straightColor is an NRGBA whose RGBA method returns the straight
// components; only for vgpdf's SetColor (see pdfOutlines.SetColor).
type straightColor color.NRGBA

func (s straightColor) RGBA() (r, g, b, a uint32) {
	return uint32(s.R) * 0x101, uint32(s.G) * 0x101, uint32(s.B) * 0x101, uint32(s.A) * 0x101
}

// FillString draws str with its baseline starting at pt, as the plain text
// handler and vgimg do, using the glyph outlines of fnt (no hinting; the same
// advances and kerning as font.Face.Width).
func (c *pdfOutlines) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 || fnt.Face == nil || str == "" {
		return
	}
	f := fnt.Face
	ppem := fixed.Int26_6(f.UnitsPerEm())
	scale := fnt.Font.Size / vg.Length(ppem)
	var (
		path    vg.Path
		x       fixed.Int26_6
		prev    sfnt.GlyphIndex
		hasPrev bool
	)
	at := func(p fixed.Point26_6) vg.Point {
		return vg.Point{X: pt.X + vg.Length(float64(vg.Length(x+p.X)*scale)), Y: pt.Y - vg.Length(float64(vg.Length(p.Y)*scale))}
	}
	for _, r := range str {
		idx, err := f.GlyphIndex(&c.buf, r)
		if err != nil {
			panic(fmt.Errorf("glyph index of %q: %v", r, err))
		}
		if hasPrev {
			if k, err := f.Kern(&c.buf, prev, idx, ppem, 0); err == nil {
				x += k
			}
		}
		segs, err := f.LoadGlyph(&c.buf, idx, ppem, nil)
		if err != nil {
			panic(fmt.Errorf("glyph outline of %q: %v", r, err))
		}
		open := false
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if open {
					path.Close()
				}
				path.Move(at(s.Args[0]))
				open = true
			case sfnt.SegmentOpLineTo:
				path.Line(at(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(s.Args[0]), at(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
			}
		}
		if open {
			path.Close()
		}
		adv, err := f.GlyphAdvance(&c.buf, idx, ppem, 0)
		if err != nil {
			panic(fmt.Errorf("glyph advance of %q: %v", r, err))
		}
		x += adv
		prev, hasPrev = idx, true
	}
	if len(path) > 0 {
		c.Fill(path)
	}
}

// pdfDate matches the info-dictionary dates fpdf writes from time.Now().
var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]{14}\)`)

// fixPDFDates rewrites the creation and modification dates to a fixed
// timestamp of the same length, keeping the xref table valid.
func fixPDFDates(b []byte) []byte {
	return pdfDate.ReplaceAllFunc(b, func(m []byte) []byte {
		key := m[:bytes.IndexByte(m, ' ')]
		return fmt.Appendf(nil, "%s (D:20000101000000)", key)
	})
}
