package codeid

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// BuildID returns the Go build ID of the executable file name, as `go tool
// buildid` prints it: the go command's hashes of the binary's inputs and of
// its contents ("<action ID>/<content ID>", for a main package two such
// pairs), so two binaries with the same build ID are the same binary. It
// reads the ELF note .note.go.buildid, or for other formats finds the ID at
// the start of the text, in the first 32 KiB of the file, as
// cmd/internal/buildid does. A binary built with -ldflags=-buildid= (an empty
// or hand-set ID) has none that the go command computed: BuildID refuses an
// ID that is not slash-separated hashes.
func BuildID(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 32<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return "", fmt.Errorf("build ID of %s: %w", name, err)
	}
	head = head[:n]
	var id string
	if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		id, err = elfBuildID(f)
	} else {
		id, err = rawBuildID(head)
	}
	if err != nil {
		return "", fmt.Errorf("build ID of %s: %w", name, err)
	}
	if !wellFormedBuildID(id) {
		return "", fmt.Errorf("build ID of %s: %q is not one the go command computes (set by -ldflags=-buildid?)", name, id)
	}
	return id, nil
}

// elfBuildID reads the note that cmd/link writes in ELF binaries: name "Go",
// type 4, the build ID as its description.
func elfBuildID(r io.ReaderAt) (string, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return "", err
	}
	sec := ef.Section(".note.go.buildid")
	if sec == nil {
		return "", errors.New("no .note.go.buildid section")
	}
	data, err := sec.Data()
	if err != nil {
		return "", err
	}
	const goNoteType = 4
	if len(data) < 16 {
		return "", errors.New("short .note.go.buildid")
	}
	order := ef.ByteOrder
	namesz, descsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
	desc := 12 + (uint64(namesz)+3)&^3
	if namesz != 4 || typ != goNoteType || string(data[12:16]) != "Go\x00\x00" || desc+uint64(descsz) > uint64(len(data)) {
		return "", errors.New("malformed .note.go.buildid")
	}
	return string(data[desc : desc+uint64(descsz)]), nil
}

// rawBuildID finds `\xff Go build ID: "<id>"\n \xff` in the head of a
// binary.
func rawBuildID(head []byte) (string, error) {
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	i := bytes.Index(head, []byte(prefix))
	if i < 0 {
		return "", errors.New("no Go build ID in the first 32 KiB")
	}
	rest := head[i+len(prefix):]
	j := bytes.Index(rest, []byte(suffix))
	if j < 0 {
		return "", errors.New("unterminated Go build ID")
	}
	return string(rest[:j]), nil
}

// wellFormedBuildID reports whether id is two or four slash-separated
// hashes in the go command's encoding (base64 URL alphabet).
func wellFormedBuildID(id string) bool {
	parts := strings.Split(id, "/")
	if len(parts) != 2 && len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) < 16 {
			return false
		}
		for _, c := range []byte(p) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
