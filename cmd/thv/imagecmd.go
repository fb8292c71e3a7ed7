package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline/container"
)

func newImageCommand() *cobra.Command {
	var pf projectFlags
	var output string
	cmd := &cobra.Command{
		Use:   "image [-o FILE]",
		Short: "Build the OCI image of this thv (FROM scratch, the static binary only)",
		Long: `Build the OCI image that --executor container runs tasks in: FROM scratch,
holding this thv binary at /thv and nothing else, run as uid 65534. The
image is reproducible: the same binary gives the same digest on any machine
(fixed times, owners and order; nothing from the host). It is kept in the
store as an OCI image layout (<store>/oci) and, with -o, written as an
oci-archive that podman load and docker load accept.

The binary must be static and path-free: build it with make build
(CGO_ENABLED=0 go build -trimpath).`,
		Example: `  thv image                      # build, keep in .thv/oci, print the digest
  thv image -o thv-image.tar     # and export it
  podman load -i thv-image.tar`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, err := pf.open(false)
			if err != nil {
				return err
			}
			img, err := projectImage(proj.Store)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "image %s (id %s) in %s\n", img.Digest, img.ID, filepath.Join(proj.Store.Root(), "oci"))
			if output == "" {
				return nil
			}
			f, err := os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".tmp*")
			if err != nil {
				return err
			}
			defer os.Remove(f.Name())
			if err := container.WriteArchive(f, img); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			b, err := os.ReadFile(f.Name())
			if err != nil {
				return err
			}
			if err := artifacts.WriteFileAtomic(output, b); err != nil {
				return err
			}
			fmt.Fprintf(out, "wrote %s (oci-archive, %.1f MB)\n", output, float64(len(b))/1e6)
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "", "also write the image as an oci-archive tarball")
	return cmd
}

// imageArchive writes the image of this thv as an oci-archive and returns
// its manifest digest (thv bundle puts it in image/thv-oci.tar).
func imageArchive(w io.Writer) (string, error) {
	bin, err := container.StaticBinary()
	if err != nil {
		return "", fmt.Errorf("the bundle's image: %w (or bundle without one: --no-image)", err)
	}
	img, err := container.BuildImage(bin)
	if err != nil {
		return "", err
	}
	return img.Digest.String(), container.WriteArchive(w, img)
}
