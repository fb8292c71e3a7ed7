package report

import (
	"fmt"
	"html"
	"strings"
)

// esc escapes text for an HTML text node or a quoted attribute.
func esc(s string) string { return html.EscapeString(s) }

// page accumulates the HTML of the page.
type page struct{ strings.Builder }

// f writes a formatted line; the caller escapes what it interpolates.
func (p *page) f(format string, args ...any) { fmt.Fprintf(&p.Builder, format, args...) }

// section opens a section with a heading whose id is id.
func (p *page) section(id, title string) {
	p.f("<section id=\"%s\" aria-labelledby=\"%s-h\">\n<h2 id=\"%s-h\">%s</h2>\n", id, id, id, title)
}

func (p *page) end() { p.WriteString("</section>\n") }

// sr is text for screen readers only, beside a visual mark.
func sr(mark, text string) string {
	return `<span aria-hidden="true">` + mark + `</span><span class="sr">` + esc(text) + `</span>`
}
