// Package render draws the HV trajectory figures (the paper's Figures "HV
// trajectories, … front" and fig:synthetic-fronts-d3/d4/d5) with gonum/plot:
// one figure per setting, a 2×2 grid of panels (one per front geometry), each
// showing, per algorithm, the moving average of the per-round mean HV(S_t)
// over seeds with a translucent 95% CI band ([MeanCIBand], the Student-t
// interval of thv/stages/stats).
//
// [Figure] is a pure function of its arguments: it reads no file, no clock
// and no global state, and the same input gives byte-identical PNG and PDF.
// How:
//   - PNG: gonum/plot's vgimg rasteriser (fonts are the Liberation fonts
//     compiled into gonum/plot, no system fonts) encoded with image/png; both
//     are deterministic.
//   - PDF: gonum/plot's vgpdf backend (go-pdf/fpdf) has two sources of
//     non-determinism: (1) the /CreationDate and /ModDate of the info
//     dictionary come from time.Now(); (2) fonts are embedded through a
//     temporary directory and, with more than one font, emitted in Go map
//     order (fpdf sorts only when the process-global SetDefaultCatalogSort is
//     set). We avoid (2) entirely: the PDF canvas draws every string as
//     filled glyph outlines taken from the same Liberation font (pdfOutlines
//     in pdf.go), so the PDF embeds no font at all (and, as a bonus, can show any
//     glyph the font has, e.g. "σ", which fpdf's cp1252 font encoding
//     cannot). For (1), the two dates are rewritten in place to a fixed value
//     of the same length (so the xref offsets stay valid). The text of the PDF
//     is consequently not selectable/searchable — acceptable for a figure.
//     (pdfOutlines also works around vgpdf writing alpha-premultiplied RGB
//     as the colour of translucent fills, which made the CI bands grey.)
//
// Byte identity holds for a given Go toolchain and gonum/plot version
// (compress/flate, image/png and the rasteriser are part of the output) and
// is expected, not proven, across CPU architectures (the compiler may fuse
// multiply-adds on arm64, which can move an antialiased pixel or a
// rounded PDF coordinate).
//
// Size: the lines and bands are downsampled to about maxPlotPoints points
// per series (every ⌈T/maxPlotPoints⌉-th round, plus rounds 1 and T: every
// 5th round for T = 5000, every 3rd for T = 3000); the moving averages are
// computed at full resolution before downsampling, so this only drops points
// that are visually redundant after a w = 50 moving average.
package render
