//go:build unix

package userfile

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// specialFiles makes a named pipe, a link to it and a socket in dir, and
// returns them with /dev/zero, each with the kind the error names.
func specialFiles(t *testing.T, dir string) map[string]string {
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return map[string]string{fifo: "a named pipe", link: "a named pipe", sock: "a socket", "/dev/zero": "a character device"}
}
