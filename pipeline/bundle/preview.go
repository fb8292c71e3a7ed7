package bundle

import (
	"encoding/hex"
	"fmt"
	"html"
	"slices"
	"strings"
)

// preview returns ro-crate-preview.html: what the bundle holds and how to
// check it, readable in a browser without any tool. It is written with
// fmt and html.EscapeString rather than html/template, whose reflection
// keeps the linker from dropping unused methods (8 MB more binary).
func (c *crate) preview() ([]byte, error) {
	var b strings.Builder
	e := html.EscapeString
	verify := ""
	if c.opt.Verify != "" {
		verify = e(fmt.Sprintf("%-43s # manifest, store, and every task re-executed\n", c.opt.Verify))
	}
	title := e(c.opt.Tool.Name + " reproduction bundle: " + c.opt.Protocol.Path + ", profile " + c.opt.Profile)
	judged := ""
	if c.opt.Judged != "" {
		judged = "<p><strong>Protocol: " + e(c.opt.Judged) + ".</strong></p>\n"
	}
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}code{font-size:90%%}</style>
</head>
<body>
<h1>%s</h1>
<p>An RO-Crate (Workflow Run and Provenance Run Crate profiles): its machine-readable description is
<a href="ro-crate-metadata.json">ro-crate-metadata.json</a>.</p>
%s%s<h2>Check it</h2>
<pre>%ssha256sum -c SHA256SUMS                     # in the extracted directory, without %s</pre>
`, title, title, judged, c.reportLink(), verify, e(c.opt.Tool.Name))
	if c.opt.Reproduce != "" {
		fmt.Fprintf(&b, "<p>Re-run the protocol in the extracted directory: <code>%s</code></p>\n", e(c.opt.Reproduce))
	}
	image := "none in this bundle"
	if c.imageDigest != "" {
		image = fmt.Sprintf(`<a href="%s">%s</a>, <code>%s</code>`, e(fileID(ImagePath)), e(ImagePath), e(c.imageDigest))
	}
	fmt.Fprintf(&b, `<h2>The run</h2>
<table>
<tr><th>protocol</th><td><a href="%s">%s</a>, profile <code>%s</code></td></tr>
<tr><th>lock</th><td><a href="%s">%s</a></td></tr>
<tr><th>tool</th><td>%s %s (%s)</td></tr>
<tr><th>image</th><td>%s</td></tr>
<tr><th>store</th><td>%d objects, %d tasks</td></tr>
</table>
<h2>Tasks by kind</h2>
<table>
<tr><th>kind</th><th>tasks</th></tr>
`, e(fileID(c.opt.Protocol.Path)), e(c.opt.Protocol.Path), e(c.opt.Profile), e(fileID(c.opt.LockName)), e(c.opt.LockName),
		e(c.opt.Tool.Name), e(c.opt.Tool.Version), e(c.opt.Tool.GoVersion), image, c.st.objects, len(c.records))
	for _, k := range c.kinds {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td></tr>\n", e(k), len(c.byKind[k]))
	}
	b.WriteString("</table>\n<h2>Results</h2>\n<table>\n<tr><th>file</th><th>bytes</th><th>SHA-256</th></tr>\n")
	for _, p := range c.paths(ResultsDir + "/") {
		it := c.items[p]
		fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td>%d</td><td><code>%s</code></td></tr>\n", e(fileID(p)), e(p), it.size, hex.EncodeToString(it.sum[:]))
	}
	b.WriteString("</table>\n<h2>Code units the keys cover</h2>\n<table>\n<tr><th>unit</th><th>hash</th></tr>\n")
	names := sortedKeys(c.p.Lock.Code)
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "<tr><td>%s</td><td><code>%s</code></td></tr>\n", e(n), e(c.p.Lock.Code[n]))
	}
	b.WriteString("</table>\n</body>\n</html>\n")
	return []byte(b.String()), nil
}

// reportLink is the preview's link to the results' own page, if the
// bundle holds one.
func (c *crate) reportLink() string {
	p := ResultsDir + "/" + c.opt.Report
	if _, ok := c.items[p]; c.opt.Report == "" || !ok {
		return ""
	}
	return fmt.Sprintf("<p><strong>The results: open <a href=\"%s\">%s</a></strong> — the provenance, the tables, the comparison with the published values and the figures on one page.</p>\n",
		html.EscapeString(fileID(p)), html.EscapeString(p))
}
