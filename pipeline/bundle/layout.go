package bundle

// The fixed names of a bundle's parts (slash-separated, relative to the
// bundle's root). The protocol file and the lock keep the names the
// caller gives them.
const (
	ManifestName = "SHA256SUMS"
	CrateName    = "ro-crate-metadata.json"
	PreviewName  = "ro-crate-preview.html"
	StoreDir     = "store"
	ResultsDir   = "results"
	SourceDir    = "source"
	ImagePath    = "image/thv-oci.tar"
)

// metaFirst is the order of the files that lead the archive: the manifest
// first, so that a reader checks every later entry as it streams past.
var metaFirst = []string{ManifestName, CrateName, PreviewName}
