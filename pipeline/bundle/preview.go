package bundle

import (
	"bytes"
	"encoding/hex"
	"html/template"
	"slices"
)

// previewPage is ro-crate-preview.html: what the bundle holds and how to
// check it, readable in a browser without any tool.
var previewPage = template.Must(template.New("preview").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<script type="application/ld+json" src="ro-crate-metadata.json"></script>
<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}code{font-size:90%}</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>An RO-Crate (Workflow Run and Provenance Run Crate profiles): its machine-readable description is
<a href="ro-crate-metadata.json">ro-crate-metadata.json</a>.</p>
<h2>Check it</h2>
<pre>thv verify-bundle BUNDLE.tar.gz --all     # manifest, store, and every task re-executed
sha256sum -c SHA256SUMS                     # in the extracted directory, without thv</pre>
{{if .Reproduce}}<p>Re-run the protocol in the extracted directory: <code>{{.Reproduce}}</code></p>{{end}}
<h2>The run</h2>
<table>
<tr><th>protocol</th><td><a href="{{.ProtocolID}}">{{.Protocol}}</a>, profile <code>{{.Profile}}</code></td></tr>
<tr><th>lock</th><td><a href="{{.LockID}}">{{.Lock}}</a></td></tr>
<tr><th>tool</th><td>{{.Tool}} {{.Version}} ({{.Go}})</td></tr>
<tr><th>image</th><td>{{if .Image}}<a href="image/thv-oci.tar">image/thv-oci.tar</a>, <code>{{.Image}}</code>{{else}}none in this bundle{{end}}</td></tr>
<tr><th>store</th><td>{{.Objects}} objects, {{.Tasks}} tasks{{if .Sealed}}, the lock's seal{{end}}</td></tr>
</table>
<h2>Tasks by kind</h2>
<table>
<tr><th>kind</th><th>tasks</th></tr>
{{range .Kinds}}<tr><td>{{.Name}}</td><td>{{.Tasks}}</td></tr>
{{end}}</table>
<h2>Results</h2>
<table>
<tr><th>file</th><th>bytes</th><th>SHA-256</th></tr>
{{range .Results}}<tr><td><a href="{{.ID}}">{{.Path}}</a></td><td>{{.Size}}</td><td><code>{{.Sum}}</code></td></tr>
{{end}}</table>
<h2>Code units the keys cover</h2>
<table>
<tr><th>unit</th><th>hash</th></tr>
{{range .Code}}<tr><td>{{.Name}}</td><td><code>{{.Hash}}</code></td></tr>
{{end}}</table>
</body>
</html>
`))

func (c *crate) preview() ([]byte, error) {
	type kind struct {
		Name  string
		Tasks int
	}
	type file struct {
		ID, Path, Sum string
		Size          int64
	}
	type unit struct{ Name, Hash string }
	v := struct {
		Title, Protocol, ProtocolID, Profile, Lock, LockID, Tool, Version, Go, Image, Reproduce string
		Objects, Tasks                                                                          int
		Sealed                                                                                  bool
		Kinds                                                                                   []kind
		Results                                                                                 []file
		Code                                                                                    []unit
	}{
		Title:    c.opt.Tool.Name + " reproduction bundle: " + c.opt.Protocol.Path + ", profile " + c.opt.Profile,
		Protocol: c.opt.Protocol.Path, ProtocolID: fileID(c.opt.Protocol.Path), Profile: c.opt.Profile,
		Lock: c.opt.LockName, LockID: fileID(c.opt.LockName),
		Tool: c.opt.Tool.Name, Version: c.opt.Tool.Version, Go: c.opt.Tool.GoVersion, Image: c.imageDigest,
		Reproduce: c.opt.Reproduce, Objects: c.st.objects, Tasks: len(c.status.Results), Sealed: c.st.sealed,
	}
	for _, k := range c.kinds {
		v.Kinds = append(v.Kinds, kind{k, len(c.byKind[k])})
	}
	for _, p := range c.paths(ResultsDir + "/") {
		it := c.items[p]
		v.Results = append(v.Results, file{fileID(p), p, hex.EncodeToString(it.sum[:]), it.size})
	}
	names := sortedKeys(c.p.Lock.Code)
	slices.Sort(names)
	for _, n := range names {
		v.Code = append(v.Code, unit{n, c.p.Lock.Code[n]})
	}
	var b bytes.Buffer
	err := previewPage.Execute(&b, v)
	return b.Bytes(), err
}
