package report

import (
	"fmt"
	"strings"
)

// baseCSS is the page's style: system fonts (no download), dark text on
// white (contrast above 7:1), verdict colours that always come with their
// word.
const baseCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1a1a1a;background:#fff;line-height:1.45;margin:0 auto;max-width:78em;padding:0 1em 3em}
a{color:#0645ad}a:visited{color:#5a2d91}
h1{font-size:1.6em;margin:.8em 0 .3em}h2{border-bottom:2px solid #444;padding-bottom:.1em;margin-top:2em}
code{font-size:.92em;overflow-wrap:anywhere}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.2em}
.skip{position:absolute;left:-999em}.skip:focus{left:1em;top:1em;background:#fff;padding:.3em}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.wrap{overflow-x:auto;margin:1em 0}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
caption{text-align:left;font-weight:600;padding:.3em 0;caption-side:top}
th,td{border:1px solid #b5b5b5;padding:.2em .45em;vertical-align:top}
thead th{background:#ececec;text-align:center}
tbody th{text-align:left;font-weight:normal}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.kv th{text-align:left;background:#f3f3f3;font-weight:600;white-space:nowrap}
.ci{color:#4a4a4a;font-size:.85em}
.best{font-weight:700}
.ok{color:#0b5a1f;background:#e2f3e6}.bad{color:#8b1414;background:#fbe3e3}.none{color:#5a4300;background:#fff1c7}
td.ok,td.bad,td.none{font-weight:600;white-space:nowrap}
.counts{font-size:1.1em}
header p{margin:.35em 0;max-width:75em}
.verdict{font-size:1.12em;border-left:5px solid #1f5fbf;padding:.3em .6em;background:#f2f6fc}
.protocol.modified{border-left:5px solid #c2410c;padding:.2em .6em;background:#fdf1ea}
.check code{background:#f3f3f3;padding:0 .25em}
.legend>span{margin-right:1.2em;white-space:nowrap}
.swatch{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;border:1px solid #555}
figure.plot{margin:.4em 0}
#plot h2{margin-top:.6em}
.na{color:#333;background:#ececec}
td.na{font-weight:600}
fieldset{display:inline-block;border:1px solid #b5b5b5;margin:.3em .6em .3em 0;padding:.3em .6em}
legend{font-weight:600}
fieldset label{margin-right:.7em;white-space:nowrap}
figure{margin:1.5em 0}figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{max-width:60em}
ul.files{columns:2 28em}
`

// style is the page's CSS: baseCSS and the comparison filter's rules. The
// filter is radio buttons and :has(): it needs no script, and a browser
// without :has() shows every row.
func style(p Page) string {
	if p.Compare == nil {
		return baseCSS
	}
	var b strings.Builder
	b.WriteString(baseCSS)
	settings, algos := filterValues(p.Compare)
	for i := range settings {
		fmt.Fprintf(&b, "#comparison:has(#fs-%d:checked) tbody tr:not([data-s=\"%d\"]){display:none}\n", i, i)
	}
	for i := range algos {
		fmt.Fprintf(&b, "#comparison:has(#fa-%d:checked) tbody tr:not([data-a=\"%d\"]){display:none}\n", i, i)
	}
	for _, v := range verdicts {
		fmt.Fprintf(&b, "#comparison:has(#fv-%s:checked) tbody tr:not([data-v=\"%s\"]){display:none}\n", v.id, v.id)
	}
	return b.String()
}
