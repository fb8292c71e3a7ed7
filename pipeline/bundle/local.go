package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// ErrLocal is wrapped by the errors of Extract for a fault of this
// machine, not of the bundle: the target's file system full, over quota,
// read-only or not writable, an I/O error, the bundle's file unreadable.
// Such a bundle was not judged; the caller reports it without rejecting
// the bundle. The system's error is wrapped too (errors.Is(err,
// syscall.ENOSPC)).
var ErrLocal = errors.New("a fault of this machine, not of the bundle")

// A localError is a fault of this machine.
type localError struct {
	err error // the system's
	msg string
}

func (e *localError) Error() string   { return e.msg }
func (e *localError) Unwrap() []error { return []error{ErrLocal, e.err} }

// isLocal reports whether err, met while writing the target, is this
// machine's fault rather than the bundle's.
func isLocal(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || isQuotaErr(err) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EIO)
}

// local returns err, met doing op below dir, as a localError if it is
// this machine's fault (nil for nil, err itself otherwise).
func (x *extractor) local(dir, op string, err error) error {
	if err == nil || !isLocal(err) {
		return err
	}
	var what, fix string
	switch {
	case errors.Is(err, syscall.ENOSPC):
		what, fix = "is full", "free space, or extract with --dir on a larger disk"
	case isQuotaErr(err):
		what, fix = "is over your disk quota", "free space, or extract with --dir on another disk"
	case errors.Is(err, syscall.EROFS):
		what, fix = "is read-only", "extract with --dir on a writable disk"
	case errors.Is(err, fs.ErrPermission):
		what, fix = "may not be written by you", "extract with --dir in a directory you may write"
	default:
		what, fix = "fails (an I/O error)", "check the disk (dmesg), or extract with --dir on another disk"
	}
	need := ""
	if x.disk > 0 {
		need = fmt.Sprintf("; the bundle's files so far need %s", sizeText(x.disk))
	}
	return &localError{err, fmt.Sprintf("this machine's file system at %s %s (%s: %v%s): %s; the bundle was not judged",
		dir, what, op, errnoText(err), need, fix)}
}

// errnoText is the system's words for err, without the path that op
// already gives.
func errnoText(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fsSpace is what statFS tells of a file system, in bytes.
type fsSpace struct {
	avail, size, block int64 // free to this user, in all, one block
}

// sourceReader keeps the first error of reading the bundle itself, which
// is never the archive's fault.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}
