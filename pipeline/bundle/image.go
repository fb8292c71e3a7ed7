package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Limits on what BinaryFromImage reads from an image.
const (
	maxImageJSON   = 4 << 20
	maxImageBinary = 1 << 30
)

// BinaryFromImage returns the file at binPath (e.g. "/thv") of the OCI
// image in the oci-archive at archive (an OCI layout as a tar: index.json,
// blobs/sha256/…), and the image's platform ("linux/amd64"). Every blob
// read is checked against its digest; only the index, one manifest, its
// config and its layers are read, each bounded in size.
func BinaryFromImage(archive, binPath string) (bin []byte, platform string, err error) {
	var index struct {
		Manifests []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"manifests"`
	}
	if err := readJSON(archive, "index.json", "", &index); err != nil {
		return nil, "", err
	}
	if len(index.Manifests) != 1 {
		return nil, "", fmt.Errorf("%s: index.json lists %d manifests, want one", archive, len(index.Manifests))
	}
	var manifest struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := readBlobJSON(archive, index.Manifests[0].Digest, &manifest); err != nil {
		return nil, "", err
	}
	var config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	}
	if err := readBlobJSON(archive, manifest.Config.Digest, &config); err != nil {
		return nil, "", err
	}
	platform = config.OS + "/" + config.Architecture
	want := strings.TrimPrefix(path.Clean("/"+binPath), "/")
	// The last layer that holds the file wins, as in a container.
	for _, l := range manifest.Layers {
		name, err := blobName(l.Digest)
		if err != nil {
			return nil, "", fmt.Errorf("%s: layer: %w", archive, err)
		}
		err = readEntry(archive, name, maxImageBinary*2, l.Digest, func(r io.Reader) error {
			b, found, err := fileInLayer(r, want)
			if found {
				bin = b
			}
			return err
		})
		if err != nil {
			return nil, "", err
		}
	}
	if bin == nil {
		return nil, "", fmt.Errorf("%s: the image has no %s", archive, binPath)
	}
	return bin, platform, nil
}

func blobName(digest string) (string, error) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if _, err := hex.DecodeString(h); !ok || len(h) != 64 || err != nil || strings.ToLower(h) != h {
		return "", fmt.Errorf("not a sha256 digest: %.80q", digest)
	}
	return "blobs/sha256/" + h, nil
}

func readBlobJSON(archive, digest string, v any) error {
	name, err := blobName(digest)
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	return readJSON(archive, name, digest, v)
}

func readJSON(archive, name, digest string, v any) error {
	return readEntry(archive, name, maxImageJSON, digest, func(r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, v); err != nil {
			return fmt.Errorf("%s in %s: %v", name, archive, err)
		}
		return nil
	})
}

// readEntry finds the regular file name in the tar at archive and hands
// its bytes to f; with a digest, the bytes must hash to it.
func readEntry(archive, name string, limit int64, digest string, f func(io.Reader) error) error {
	file, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer file.Close()
	tr := tar.NewReader(bufio.NewReader(file))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s: no %s: not an oci-archive", archive, name)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", archive, err)
		}
		if strings.TrimPrefix(path.Clean(h.Name), "./") != name {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return fmt.Errorf("%s: %s is not a regular file", archive, name)
		}
		if h.Size > limit {
			return fmt.Errorf("%s: %s has %d bytes, more than the limit of %d", archive, name, h.Size, limit)
		}
		sum := sha256.New()
		if err := f(io.TeeReader(tr, sum)); err != nil {
			return err
		}
		io.Copy(sum, tr) // what f left unread
		if digest != "" && "sha256:"+hex.EncodeToString(sum.Sum(nil)) != digest {
			return fmt.Errorf("%s: %s does not match its digest %s: the image is damaged", archive, name, digest)
		}
		return nil
	}
}

// fileInLayer reads a layer (a tar, gzip-compressed or not) and returns
// the bytes of the regular file want.
func fileInLayer(r io.Reader, want string) ([]byte, bool, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, err
		}
		r = gz
	} else {
		r = br
	}
	tr := tar.NewReader(r)
	var bin []byte
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return bin, found, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("image layer: %v", err)
		}
		if strings.TrimPrefix(path.Clean("/"+h.Name), "/") != want {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, false, fmt.Errorf("image layer: /%s is not a regular file", want)
		}
		if h.Size > maxImageBinary {
			return nil, false, errors.New("image layer: the binary is larger than 1 GiB")
		}
		if bin, err = io.ReadAll(io.LimitReader(tr, h.Size)); err != nil {
			return nil, false, err
		}
		found = true
	}
}
