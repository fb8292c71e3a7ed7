package bundle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"thv/artifacts"
	"thv/pipeline"
)

// The profiles a bundle's crate conforms to: RO-Crate 1.1, and the
// Workflow Run Crate family (Process, Workflow and Provenance Run Crate
// 0.5) with Workflow RO-Crate 1.0, which Workflow Run Crate builds on.
const (
	roCrate11     = "https://w3id.org/ro/crate/1.1"
	workflowCrate = "https://w3id.org/workflowhub/workflow-ro-crate/1.0"
	processRun    = "https://w3id.org/ro/wfrun/process/0.5"
	workflowRun   = "https://w3id.org/ro/wfrun/workflow/0.5"
	provenanceRun = "https://w3id.org/ro/wfrun/provenance/0.5"
	wfrunContext  = "https://w3id.org/ro/terms/workflow-run/context"
	dockerImage   = "https://w3id.org/ro/terms/workflow-run#DockerImage"
)

// entity is one node of the crate's graph; encoding/json sorts its keys,
// so "@id" and "@type" lead and the bytes are deterministic.
type entity map[string]any

func ref(id string) entity { return entity{"@id": id} }

func refs(ids []string) []entity {
	out := make([]entity, len(ids))
	for i, id := range ids {
		out[i] = ref(id)
	}
	return out
}

// fileID is the @id of a bundle path: a relative URI, each element
// percent-encoded.
func fileID(p string) string {
	els := strings.Split(p, "/")
	for i, el := range els {
		els[i] = url.PathEscape(el)
	}
	return strings.Join(els, "/")
}

// localID is an @id local to the crate ("#…") for a name such as a task ID.
func localID(prefix, name string) string { return "#" + prefix + "/" + fileID(name) }

// crate holds what the RO-Crate and its preview describe.
type crate struct {
	p           *pipeline.Project
	status      *pipeline.Report
	st          *storeContents
	items       map[string]*item // by bundle path
	opt         Options
	imageDigest string
	kinds       []string
	byKind      map[string][]*pipeline.Record
	records     []*pipeline.Record          // bundledRecords
	producer    map[artifacts.Digest]string // object → first "task/output" that made it
}

func newCrate(p *pipeline.Project, status *pipeline.Report, st *storeContents, items []*item, opt Options, imageDigest string) *crate {
	c := &crate{p: p, status: status, st: st, opt: opt, imageDigest: imageDigest,
		items: map[string]*item{}, byKind: map[string][]*pipeline.Record{}, producer: map[artifacts.Digest]string{}}
	for _, it := range items {
		c.items[it.path] = it
	}
	c.records = bundledRecords(p, status)
	for _, rec := range c.records {
		if _, ok := c.byKind[rec.Kind]; !ok {
			c.kinds = append(c.kinds, rec.Kind)
		}
		c.byKind[rec.Kind] = append(c.byKind[rec.Kind], rec)
		for _, o := range rec.Outputs { // sorted by name
			if _, ok := c.producer[o.Digest]; !ok {
				c.producer[o.Digest] = rec.ID + "/" + o.Name
			}
		}
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string { return sortedPaths(m) }

// objectPath is the bundle path of a store object.
func (c *crate) objectPath(d artifacts.Digest) string { return objectBundlePath(d) }

// encode returns ro-crate-metadata.json and ro-crate-preview.html.
func (c *crate) encode() (metadata, preview []byte, err error) {
	var g []entity
	add := func(e entity) { g = append(g, e) }
	protocol := fileID(c.opt.Protocol.Path)
	lock := fileID(c.opt.LockName)

	add(entity{"@id": "ro-crate-metadata.json", "@type": "CreativeWork",
		"about": ref("./"), "conformsTo": refs([]string{roCrate11, workflowCrate})})

	// The run: one CreateAction for the workflow, one per task kind (the
	// tools), a ControlAction per kind tying the workflow's step to it,
	// and an OrganizeAction for the tool, the engine.
	actions := []string{"#run"}
	for _, k := range c.kinds {
		actions = append(actions, localID("run", k))
	}
	for _, k := range c.kinds {
		actions = append(actions, localID("control", k))
	}
	actions = append(actions, "#organize")

	var parts []string
	parts = append(parts, protocol, lock)
	if c.hasDir(ResultsDir) {
		parts = append(parts, ResultsDir+"/")
	}
	parts = append(parts, StoreDir+"/")
	if c.hasDir(SourceDir) {
		parts = append(parts, SourceDir+"/")
	}
	if c.imageDigest != "" {
		parts = append(parts, ImagePath)
	}
	image := "This bundle holds no container image."
	if c.imageDigest != "" {
		image = ImagePath + " is the OCI image (an oci-archive: podman load / docker load) holding the static " + c.opt.Tool.Name + " binary that computed the lock's keys, digest " + c.imageDigest + "."
	}
	check := ""
	if c.opt.Verify != "" {
		check = " Check it with: " + c.opt.Verify
	}
	root := entity{"@id": "./", "@type": "Dataset",
		"name":        fmt.Sprintf("%s reproduction bundle: %s, profile %s", c.opt.Tool.Name, c.opt.Protocol.Path, c.opt.Profile),
		"description": fmt.Sprintf("Everything needed to check this run bit for bit: the protocol (%s, profile %s), the lock (%s: every task's key, parameters, inputs and outputs), the results, a store (store/) with every artifact the lock's %d tasks output and their index entries, the source of the module (source/), and a SHA256SUMS manifest. %s%s", c.opt.Protocol.Path, c.opt.Profile, c.opt.LockName, len(c.records), image, check),
		"conformsTo":  refs([]string{processRun, workflowRun, provenanceRun, workflowCrate}),
		"mainEntity":  ref(protocol),
		"hasPart":     refs(parts),
		"mentions":    refs(actions),
	}
	if c.opt.Published != "" {
		root["datePublished"] = c.opt.Published
	}
	add(root)
	for _, pr := range []struct{ id, name, version string }{
		{processRun, "Process Run Crate", "0.5"}, {workflowRun, "Workflow Run Crate", "0.5"},
		{provenanceRun, "Provenance Run Crate", "0.5"}, {workflowCrate, "Workflow RO-Crate", "1.0"},
	} {
		add(entity{"@id": pr.id, "@type": "CreativeWork", "name": pr.name, "version": pr.version})
	}

	// The workflow: the protocol file run by the tool. Its steps are the
	// task kinds, each implemented by a tool (the tool's stage of that
	// kind).
	var tools, steps []string
	for _, k := range c.kinds {
		tools = append(tools, localID("tool", k))
		steps = append(steps, localID("step", k))
	}
	wf := c.fileEntity(c.opt.Protocol.Path, "the protocol: which tasks exist, with which parameters")
	wf["@type"] = []string{"File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"}
	wf["name"] = fmt.Sprintf("%s protocol %s (profile %s)", c.opt.Tool.Name, c.opt.Protocol.Path, c.opt.Profile)
	wf["programmingLanguage"] = ref("#protocol-language")
	wf["hasPart"] = refs(tools)
	wf["step"] = refs(steps)
	wf["input"] = refs([]string{"#param/profile"})
	wf["output"] = refs([]string{"#param/lock", "#param/results"})
	add(wf)
	add(entity{"@id": "#protocol-language", "@type": "ComputerLanguage", "name": c.opt.Tool.Name + " protocol (YAML)",
		"description": "A " + c.opt.Tool.Name + " protocol file: " + c.opt.Tool.Name + " plans the task DAG from it."})
	add(entity{"@id": "#param/profile", "@type": "FormalParameter", "additionalType": "Text", "name": "profile", "valueRequired": "True"})
	add(entity{"@id": "#param/lock", "@type": "FormalParameter", "additionalType": "File", "name": "lock", "encodingFormat": "application/json"})
	add(entity{"@id": "#param/results", "@type": "FormalParameter", "additionalType": "File", "name": "results", "multipleValues": "True"})
	add(entity{"@id": "#pv/profile", "@type": "PropertyValue", "name": "profile", "value": c.opt.Profile, "exampleOfWork": ref("#param/profile")})

	tool := entity{"@id": c.toolID(), "@type": "SoftwareApplication", "name": c.opt.Tool.Name,
		"description": "The engine: plans the protocol's tasks, keys each by SHA-256 over its kind, code identity, parameters and input digests, and runs the stale ones. The lock's \"code\" lists the code units (packages, modules, toolchain) the keys cover. " + image}
	if c.opt.Tool.Version != "" {
		tool["softwareVersion"] = c.opt.Tool.Version
	}
	if c.opt.Tool.GoVersion != "" {
		tool["softwareRequirements"] = ref("#go")
		add(entity{"@id": "#go", "@type": "SoftwareApplication", "name": "Go", "softwareVersion": strings.TrimPrefix(c.opt.Tool.GoVersion, "go"), "url": ref("https://go.dev/")})
	}
	if c.hasDir(SourceDir) {
		tool["isBasedOn"] = ref(SourceDir + "/")
		desc := "The module's source as compiled into the binary that made this bundle."
		if c.opt.Rebuild != "" {
			desc += " Rebuild with: " + c.opt.Rebuild + "; the rebuilt " + c.opt.Tool.Name + " computes the same keys (checking this bundle with it says so)."
		}
		add(entity{"@id": SourceDir + "/", "@type": "Dataset", "name": "source of the " + c.opt.Tool.Name + " module", "description": desc})
	}
	add(tool)

	organize := entity{"@id": "#organize", "@type": "OrganizeAction", "name": "Run of " + c.opt.Tool.Name,
		"instrument": ref(c.toolID()), "result": ref("#run"), "actionStatus": ref("http://schema.org/CompletedActionStatus")}
	var controls []string
	for _, k := range c.kinds {
		controls = append(controls, localID("control", k))
	}
	organize["object"] = refs(controls)
	if c.imageDigest != "" {
		organize["containerImage"] = ref("#image")
	}
	add(organize)

	// The workflow run: the protocol in, the lock and the results out.
	resultIDs := []string{lock}
	for _, p := range c.paths(ResultsDir + "/") {
		resultIDs = append(resultIDs, fileID(p))
	}
	run := entity{"@id": "#run", "@type": "CreateAction",
		"name":         fmt.Sprintf("%s repro of %s (profile %s)", c.opt.Tool.Name, c.opt.Protocol.Path, c.opt.Profile),
		"instrument":   ref(protocol),
		"object":       refs([]string{"#pv/profile"}),
		"result":       refs(resultIDs),
		"actionStatus": ref("http://schema.org/CompletedActionStatus"),
	}
	if c.opt.Reproduce != "" {
		run["description"] = "Reproduce in the extracted bundle with: " + c.opt.Reproduce
	}
	if c.imageDigest != "" {
		run["containerImage"] = ref("#image")
	}
	add(run)
	lockFile := c.fileEntity(c.opt.LockName, "the lock: every task's key, parameters, input and output digests, and the code units the keys cover")
	lockFile["exampleOfWork"] = ref("#param/lock")
	add(lockFile)
	add(c.fileEntity(ManifestName, "SHA-256 of every file of the bundle but itself (sha256sum -c SHA256SUMS)"))

	if c.hasDir(ResultsDir) {
		var res []string
		for _, p := range c.paths(ResultsDir + "/") {
			res = append(res, fileID(p))
		}
		add(entity{"@id": ResultsDir + "/", "@type": "Dataset", "name": "results", "description": "The exported tables and figures, copies of store objects (isBasedOn)", "hasPart": refs(res)})
		for _, p := range c.paths(ResultsDir + "/") {
			e := c.fileEntity(p, "")
			e["exampleOfWork"] = ref("#param/results")
			if d := artifacts.Digest(c.items[p].sum); c.st.size[d] > 0 || c.producer[d] != "" {
				e["isBasedOn"] = ref(c.objectPath(d))
				e["description"] = "output " + c.producer[d]
			} else if d, ok := c.opt.Drawn[strings.TrimPrefix(p, ResultsDir+"/")]; ok && c.producer[d] != "" {
				e["isBasedOn"] = ref(c.objectPath(d))
				e["description"] = "drawn from output " + c.producer[d] + " when the results were exported; its bytes depend on the CPU that drew it"
			}
			add(e)
		}
	}

	// The store: every object a task output, as a File with its digest.
	var objects []string
	for d := range c.st.size {
		objects = append(objects, c.objectPath(d))
	}
	slices.Sort(objects)
	add(entity{"@id": StoreDir + "/", "@type": "Dataset", "name": "artifact store",
		"description": "A " + c.opt.Tool.Name + " store: objects/<2 hex>/<64 hex> are the artifacts, named by the SHA-256 of their bytes (Parquet tables are read by DuckDB, pandas, Arrow); index/ maps each task key to its outputs; checking the bundle re-hashes them and re-executes their tasks.",
		"hasPart":     refs(objects)})

	// One CreateAction per kind: the tool, its tasks' parameters and the
	// objects they read, and the objects they wrote.
	for i, k := range c.kinds {
		recs := c.byKind[k]
		tool := localID("tool", k)
		add(entity{"@id": tool, "@type": "SoftwareApplication", "name": c.opt.Tool.Name + " stage " + k,
			"input":  refs([]string{tool + "/params", tool + "/inputs"}),
			"output": refs([]string{tool + "/outputs"})})
		add(entity{"@id": tool + "/params", "@type": "FormalParameter", "additionalType": "Text", "name": k + "/params", "description": "the task's canonical parameters (JSON)", "encodingFormat": "application/json"})
		add(entity{"@id": tool + "/inputs", "@type": "FormalParameter", "additionalType": "File", "name": k + "/inputs", "multipleValues": "True", "valueRequired": "False"})
		add(entity{"@id": tool + "/outputs", "@type": "FormalParameter", "additionalType": "File", "name": k + "/outputs", "multipleValues": "True"})
		add(entity{"@id": localID("step", k), "@type": "HowToStep", "name": k, "position": strconv.Itoa(i), "workExample": ref(tool)})
		in, out := map[string]bool{}, map[string]bool{}
		var params []string
		for _, rec := range recs {
			for _, dg := range sortedKeys(rec.InputDigests()) {
				if d, err := artifacts.ParseDigest(rec.InputDigests()[dg]); err == nil {
					in[c.objectPath(d)] = true
				}
			}
			for _, o := range rec.Outputs {
				out[c.objectPath(o.Digest)] = true
			}
			pv := localID("params", rec.ID)
			params = append(params, pv)
			add(entity{"@id": pv, "@type": "PropertyValue", "name": rec.ID, "value": string(rec.Params), "exampleOfWork": ref(tool + "/params")})
		}
		object := append(sortedPaths(in), params...)
		add(entity{"@id": localID("run", k), "@type": "CreateAction",
			"name":         fmt.Sprintf("%s: %d tasks", k, len(recs)),
			"description":  fmt.Sprintf("The %d tasks of kind %s; each task's key, parameters, inputs and outputs are its record in %s.", len(recs), k, c.opt.LockName),
			"instrument":   ref(tool),
			"object":       refs(object),
			"result":       refs(sortedPaths(out)),
			"actionStatus": ref("http://schema.org/CompletedActionStatus")})
		add(entity{"@id": localID("control", k), "@type": "ControlAction", "name": "orchestrate " + k,
			"instrument": ref(localID("step", k)), "object": ref(localID("run", k))})
	}
	for _, id := range objects {
		it := c.items[id]
		d := artifacts.Digest(it.sum)
		e := entity{"@id": id, "@type": "File", "name": c.producer[d],
			"contentSize": strconv.FormatInt(it.size, 10), "sha256": hex.EncodeToString(it.sum[:]),
			"encodingFormat": c.st.format[d]}
		if k, _, ok := strings.Cut(c.producer[d], "/"); ok {
			e["exampleOfWork"] = ref(localID("tool", k) + "/outputs")
		}
		add(e)
	}

	if c.imageDigest != "" {
		e := c.fileEntity(ImagePath, "the OCI image as an oci-archive tarball (podman load, docker load, skopeo)")
		e["about"] = ref("#image")
		add(e)
		add(entity{"@id": "#image", "@type": "ContainerImage", "additionalType": ref(dockerImage),
			"name": c.opt.Tool.Name, "sha256": strings.TrimPrefix(c.imageDigest, "sha256:"),
			"description": "OCI image FROM scratch holding the static " + c.opt.Tool.Name + " binary; not in a registry: load it from " + ImagePath})
	}

	var buf bytes.Buffer
	buf.WriteString("{\"@context\": [\"https://w3id.org/ro/crate/1.1/context\", \"" + wfrunContext + "\"],\n\"@graph\": [\n")
	for i, e := range g {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, nil, err
		}
		buf.Write(b)
		if i < len(g)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]}\n")
	preview, err = c.preview()
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), preview, nil
}

// toolID is the crate's @id of the engine, named after it ("#thv").
func (c *crate) toolID() string {
	if c.opt.Tool.Name == "" {
		return "#tool"
	}
	return "#" + url.PathEscape(c.opt.Tool.Name)
}

// fileEntity describes a file of the bundle with its size, digest and type.
func (c *crate) fileEntity(p, description string) entity {
	it := c.items[p]
	e := entity{"@id": fileID(p), "@type": "File", "name": p[strings.LastIndex(p, "/")+1:], "encodingFormat": mediaTypeOf(p)}
	if it != nil {
		e["contentSize"] = strconv.FormatInt(it.size, 10)
		e["sha256"] = hex.EncodeToString(it.sum[:])
	}
	if description != "" {
		e["description"] = description
	}
	return e
}

// paths lists the bundle's files below prefix, sorted.
func (c *crate) paths(prefix string) []string {
	var out []string
	for p := range c.items {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func (c *crate) hasDir(dir string) bool { return len(c.paths(dir+"/")) > 0 }
