// Package render draws the HV trajectory figures (the paper's Figures "HV
// trajectories, … front" and fig:synthetic-fronts-d3/d4/d5) with gonum/plot:
// one figure per setting, a 2×2 grid of panels (one per front geometry), each
// showing, per algorithm, the moving average of the per-round mean HV(S_t)
// over seeds with a translucent 95% CI band ([MeanCIBand], the Student-t
// interval of thv/stages/stats).
//
// A figure is made in two halves. [Curves] computes what is drawn from the
// trajectories (the moving averages of the mean and its CI bounds, at the
// drawn rounds): pure float64 arithmetic, FMA-guarded like every hashed
// package, so its numbers are the same on every CPU; the figures stage
// stores them as an artifact. [Draw] plots curves, and nothing else, as PNG
// or PDF: the figures stage draws the PDF from the curves it stores, and
// the export to results/ draws the PNG from the same stored curves.
//
// [Draw] is a pure function of its arguments: it reads no file, no clock
// and no global state, and the same input gives byte-identical PNG and PDF
// on one machine. How:
//   - PNG: gonum/plot's vgimg rasteriser (fonts are the Liberation fonts
//     compiled into gonum/plot, no system fonts) encoded with image/png; both
//     are deterministic.
//   - PDF: gonum/plot's vgpdf backend (go-pdf/fpdf) has two sources of
//     non-determinism: (1) the /CreationDate and /ModDate of the info
//     dictionary come from time.Now(); (2) fonts are embedded through a
//     temporary directory and, with more than one font, emitted in Go map
//     order (fpdf sorts only when the process-global SetDefaultCatalogSort is
//     set). We avoid (2) entirely: the PDF canvas draws every string as
//     filled glyph outlines taken from the same Liberation font
//     (pdfOutlines), so the PDF embeds no font at all (and, as a bonus, can show any
//     glyph the font has, e.g. "σ", which fpdf's cp1252 font encoding
//     cannot). For (1), the two dates are rewritten in place to a fixed value
//     of the same length (so the xref offsets stay valid). The text of the PDF
//     is consequently not selectable/searchable — acceptable for a figure.
//     (pdfOutlines also works around vgpdf writing alpha-premultiplied RGB
//     as the colour of translucent fills, which made the CI bands grey.)
//
// Byte identity holds for a given Go toolchain and gonum/plot version
// (compress/flate, image/png and the rasteriser are part of the output).
// Across CPU architectures the PDF is the same (fpdf prints coordinates
// with two to five decimals, which absorbs last-bit differences; checked
// by make crossarch), the PNG is not: the rasteriser (gg, freetype,
// x/image/vector) computes in float32 and float64 that the compiler fuses
// differently per CPU, moving anti-aliased edge pixels by 1/255. That is
// why no task outputs a PNG (docs/reproducibility.md).
//
// Size: the lines and bands are downsampled to about maxPlotPoints points
// per series (every ⌈T/maxPlotPoints⌉-th round, plus rounds 1 and T: every
// 5th round for T = 5000, every 3rd for T = 3000); the moving averages are
// computed at full resolution before downsampling, so this only drops points
// that are visually redundant after a w = 50 moving average.
package render
