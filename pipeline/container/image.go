package container

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"thv/pipeline/tempdir"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts. Nothing in an image comes from the host or the
// clock: the same binary gives the same image digest anywhere.
const (
	// BinaryPath is where the thv binary sits in the image.
	BinaryPath = "/thv"
	// User is the unprivileged user every container runs as ("nobody").
	UID, GID = 65534, 65534
	// StoreMount and OutMount are the mount points of the project store
	// (read-only) and of the scratch store the worker writes.
	StoreMount = "/store"
	OutMount   = "/out"
)

// epoch is the time stamped on every file and on the image config.
var epoch = time.Unix(0, 0).UTC()

// Image is a built image and what identifies it.
type Image struct {
	Img    v1.Image
	Digest v1.Hash // the manifest digest: what the lock records
	ID     v1.Hash // the config digest: what podman and docker call the image ID
}

// BuildImage builds the image holding binary (the bytes of a static thv
// for the running architecture) and nothing else but the empty mount
// points. The layer is a tar with fixed names, order, modes, owners and
// times; the config has a fixed creation time and no history from the host.
func BuildImage(binary []byte) (*Image, error) {
	layerTar, err := rootfsTar(binary)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "thv image"}})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = runtime.GOARCH
	cf.OS = "linux"
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		User:       fmt.Sprintf("%d:%d", UID, GID),
		WorkingDir: "/",
		Env:        []string{"PATH=/"},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: epoch}); err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	id, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	return &Image{Img: img, Digest: d, ID: id}, nil
}

// rootfsTar is the image's only layer: the mount points and the binary.
func rootfsTar(binary []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: epoch, Format: tar.FormatPAX})
	}
	for _, d := range []string{"dev", "out", "proc", "store"} {
		if err := dir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: BinaryPath[1:], Mode: 0o555, Size: int64(len(binary)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// StaticBinary returns the bytes of the running thv after checking that it
// can run FROM scratch and that its image is reproducible: built with
// CGO_ENABLED=0 (no libc to find) and -trimpath (no build paths inside).
func StaticBinary() ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the thv binary: %w", err)
	}
	if err := checkStatic(); err != nil {
		return nil, fmt.Errorf("%s: %w", exe, err)
	}
	return os.ReadFile(exe)
}

// ErrNotStatic says how to build a thv that can go into an image.
var ErrNotStatic = errors.New("this thv cannot go into a FROM-scratch image: build it with `make build` (CGO_ENABLED=0 go build -trimpath -o bin/thv ./cmd/thv)")

func checkStatic() error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("no build information: %w", ErrNotStatic)
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if set["CGO_ENABLED"] != "0" {
		return fmt.Errorf("built with CGO_ENABLED=%q: %w", set["CGO_ENABLED"], ErrNotStatic)
	}
	if set["-trimpath"] != "true" {
		return fmt.Errorf("built without -trimpath: %w", ErrNotStatic)
	}
	return nil
}

// WriteLayout adds img to the OCI image layout at dir (created if needed):
// blobs are content-addressed, so writing the same image twice changes
// nothing, and the index lists each image once.
func WriteLayout(dir string, img *Image) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("creating the OCI layout %s: %w", dir, err)
		}
	}
	if err := p.ReplaceImage(img.Img, func(d v1.Descriptor) bool { return d.Digest == img.Digest }); err != nil {
		return fmt.Errorf("writing the image to %s: %w", dir, err)
	}
	return nil
}

// WriteArchive writes img as an oci-archive: a tar of an OCI image layout
// holding only img (what `podman load` and `docker load` accept). The tar
// is deterministic: sorted names, fixed times and owners.
func WriteArchive(w io.Writer, img *Image) error {
	td, err := tempdir.New("thv-oci-")
	if err != nil {
		return err
	}
	defer td.Remove()
	tmp := td.Path()
	if err := WriteLayout(tmp, img); err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == tmp {
			return err
		}
		rel, err := filepath.Rel(tmp, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o444, Size: int64(len(b)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
