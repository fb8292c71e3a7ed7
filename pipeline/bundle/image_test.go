package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ociArchive builds a minimal oci-archive: one manifest, its config for
// platform os/arch, and one gzip layer holding files.
func ociArchive(t *testing.T, goos, arch string, files map[string]string) []byte {
	t.Helper()
	blobs := map[string][]byte{}
	put := func(b []byte) (string, int) {
		h := sha256.Sum256(b)
		d := hex.EncodeToString(h[:])
		blobs[d] = b
		return "sha256:" + d, len(b)
	}
	var layer bytes.Buffer
	gz := gzip.NewWriter(&layer)
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(files[name])), Mode: 0o755})
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	gz.Close()
	layerDigest, layerSize := put(layer.Bytes())
	config, _ := json.Marshal(map[string]any{"os": goos, "architecture": arch, "rootfs": map[string]any{"type": "layers"}})
	configDigest, configSize := put(config)
	manifest, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": configDigest, "size": configSize},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layerDigest, "size": layerSize}}})
	manifestDigest, manifestSize := put(manifest)
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{map[string]any{
		"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifestDigest, "size": manifestSize}}})
	var out bytes.Buffer
	otw := tar.NewWriter(&out)
	add := func(name string, b []byte) {
		otw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(b)), Mode: 0o644})
		otw.Write(b)
	}
	add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	add("index.json", index)
	for _, d := range sortedKeys(blobs) {
		add("blobs/sha256/"+d, blobs[d])
	}
	otw.Close()
	return out.Bytes()
}

func TestBinaryFromImage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "img.tar")
	os.WriteFile(path, ociArchive(t, "linux", "amd64", map[string]string{"thv": "#!binary", "etc/x": "other"}), 0o644)
	bin, platform, err := BinaryFromImage(path, "/thv")
	if err != nil || string(bin) != "#!binary" || platform != "linux/amd64" {
		t.Fatalf("got %q %q %v", bin, platform, err)
	}
	if _, _, err := BinaryFromImage(path, "/missing"); err == nil || !strings.Contains(err.Error(), "the image has no /missing") {
		t.Fatalf("missing file: %v", err)
	}
	// One flipped byte in a blob: its digest no longer matches.
	data, _ := os.ReadFile(path)
	i := bytes.Index(data, []byte(`"architecture":"amd64"`))
	data[i+len(`"architecture":"`)] = 'b'
	os.WriteFile(path, data, 0o644)
	if _, _, err := BinaryFromImage(path, "/thv"); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Fatalf("damaged config: %v", err)
	}
}
