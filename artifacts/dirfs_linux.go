//go:build linux

package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// syncfsSupported: Linux has syncfs(2), the store's barrier (durable.go).
const syncfsSupported = true

// syncfsFile is syncfs(2) on the file system holding f.
func syncfsFile(f *os.File) error {
	return ignoringEINTR(func() error { return unix.Syncfs(int(f.Fd())) })
}

// beneathDir is the dirFS of Linux 5.6 and later: every path is resolved by
// openat2(2) from the store directory's descriptor with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, so the kernel refuses (ELOOP) a
// symbolic link in any component and any escape from the directory, in the
// same system call that opens the file. Operations on a last component
// (mkdirat, renameat, unlinkat) run relative to a parent directory opened
// that way, and act on names, never following them.
type beneathDir struct {
	dir  *os.File // the store directory, held open for the Store's life
	fd   int      // dir's descriptor
	name string   // its absolute path, for messages
}

// openat2's struct open_how and RESOLVE_* flags (linux/openat2.h).
type openHow struct{ flags, mode, resolve uint64 }

const (
	resolveNoMagiclinks = 0x02
	resolveNoSymlinks   = 0x04
	resolveBeneath      = 0x08
	atRemovedir         = 0x200
	// oPath is O_PATH (absent from package syscall): the same value on
	// every architecture Go supports.
	oPath = 0x200000
)

// sysOpenat2 is openat2's system call number: 437 on every Linux
// architecture Go supports but the MIPS ones, whose tables are offset.
var sysOpenat2 = func() uintptr {
	switch runtime.GOARCH {
	case "mips", "mipsle":
		return 4437
	case "mips64", "mips64le":
		return 5437
	}
	return 437
}()

// forceRootDir makes openDirFS use the portable os.Root implementation (for
// tests of the fallback).
var forceRootDir = false

// openDirFS opens the store directory abs: beneathDir if the kernel has
// openat2 (and no seccomp filter refuses it), else rootDir.
func openDirFS(abs string) (dirFS, error) {
	if forceRootDir {
		return openRootDir(abs)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: abs, Err: syscall.ENOTDIR}
	}
	d := &beneathDir{dir: f, fd: int(f.Fd()), name: abs}
	probe, err := d.at(".", oPath|syscall.O_DIRECTORY, 0)
	if err != nil {
		// ENOSYS (before 5.6) or a seccomp filter's EPERM: os.Root
		// still confines every operation to the directory.
		f.Close()
		return openRootDir(abs)
	}
	syscall.Close(probe)
	return d, nil
}

// at is openat2(d, rel, flags|O_CLOEXEC|O_NOFOLLOW) beneath d, following no
// link, retried on EINTR and on the EAGAIN the kernel may return when a
// rename races the resolution.
func (d *beneathDir) at(rel string, flags int, mode uint32) (int, error) {
	p, err := syscall.BytePtrFromString(rel)
	if err != nil {
		return -1, err
	}
	how := openHow{flags: uint64(flags | syscall.O_CLOEXEC | syscall.O_NOFOLLOW), resolve: resolveBeneath | resolveNoSymlinks | resolveNoMagiclinks}
	if flags&syscall.O_CREAT != 0 {
		how.mode = uint64(mode)
	}
	for try := 0; ; try++ {
		r, _, e := syscall.Syscall6(sysOpenat2, uintptr(d.fd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		runtime.KeepAlive(d.dir)
		switch {
		case e == 0:
			return int(r), nil
		case e == syscall.EINTR, e == syscall.EAGAIN && try < 100:
			continue
		}
		return -1, e
	}
}

// pathErr wraps errno from an operation on rel; ELOOP (a link on the path)
// or ENOTDIR (which O_PATH|O_DIRECTORY gives for a link as the last
// component) names the first link instead.
func (d *beneathDir) pathErr(op, rel string, errno error) error {
	if errno == syscall.ELOOP || errno == syscall.ENOTDIR {
		if link := d.firstLink(rel); link != "" {
			return &fs.PathError{Op: op, Path: d.abs(link), Err: errSymlink}
		}
	}
	return &fs.PathError{Op: op, Path: d.abs(rel), Err: errno}
}

// firstLink returns the first component of rel (as a rel) that is a
// symbolic link, or "".
func (d *beneathDir) firstLink(rel string) string {
	for i := 0; ; {
		j := strings.IndexByte(rel[i:], '/')
		prefix := rel
		if j >= 0 {
			prefix = rel[:i+j]
		}
		fd, err := d.at(prefix, oPath, 0)
		if err != nil {
			return ""
		}
		var st syscall.Stat_t
		err = syscall.Fstat(fd, &st)
		syscall.Close(fd)
		if err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			return prefix
		}
		if j < 0 {
			return ""
		}
		i += j + 1
	}
}

func (d *beneathDir) abs(rel string) string { return joinRel(d.name, rel) }

// syncfs syncs the file system of the store directory, through the
// descriptor held on it.
func (d *beneathDir) syncfs() error {
	err := ignoringEINTR(func() error { return unix.Syncfs(d.fd) })
	runtime.KeepAlive(d.dir)
	if err != nil {
		return &fs.PathError{Op: "syncfs", Path: d.name, Err: err}
	}
	return nil
}

func (d *beneathDir) file(op, rel string, flags int, perm fs.FileMode) (*os.File, error) {
	fd, err := d.at(rel, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, d.pathErr(op, rel, err)
	}
	return os.NewFile(uintptr(fd), d.abs(rel)), nil
}

func (d *beneathDir) open(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return d.file("open", rel, flag, perm)
}

// openDir needs no O_NONBLOCK: O_DIRECTORY fails on a FIFO (ENOTDIR)
// before opening it could block, and without it os.NewFile does not try
// to register the descriptor with the poller (one system call less per
// fan-out directory listed).
func (d *beneathDir) openDir(rel string) (*os.File, error) {
	return d.file("open", rel, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
}

// lstat opens rel with O_PATH|O_NOFOLLOW, which (with RESOLVE_NO_SYMLINKS)
// gives a descriptor of a link in the last component rather than failing.
func (d *beneathDir) lstat(rel string) (fs.FileInfo, error) {
	f, err := d.file("lstat", rel, oPath, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// isRegular is lstat without the *os.File: three system calls (openat2,
// fstat, close) and no allocation beyond the path, for Has.
func (d *beneathDir) isRegular(rel string) bool {
	fd, err := d.at(rel, oPath, 0)
	if err != nil {
		return false
	}
	var st syscall.Stat_t
	err = syscall.Fstat(fd, &st)
	syscall.Close(fd)
	return err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG
}

// parent opens the directory holding rel (O_PATH: enough for the *at
// calls) and returns its descriptor and rel's last component.
func (d *beneathDir) parent(op, rel string) (int, string, error) {
	dir, base := splitRel(rel)
	fd, err := d.at(dir, oPath|syscall.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", d.pathErr(op, dir, err)
	}
	return fd, base, nil
}

func (d *beneathDir) mkdir(rel string, perm fs.FileMode) error {
	pfd, base, err := d.parent("mkdir", rel)
	if err != nil {
		return err
	}
	defer syscall.Close(pfd)
	if err := ignoringEINTR(func() error { return syscall.Mkdirat(pfd, base, uint32(perm.Perm())) }); err != nil {
		return &fs.PathError{Op: "mkdir", Path: d.abs(rel), Err: err}
	}
	return nil
}

func (d *beneathDir) rename(oldrel, newrel string) error {
	ofd, obase, err := d.parent("rename", oldrel)
	if err != nil {
		return err
	}
	defer syscall.Close(ofd)
	nfd, nbase, err := d.parent("rename", newrel)
	if err != nil {
		return err
	}
	defer syscall.Close(nfd)
	if err := ignoringEINTR(func() error { return syscall.Renameat(ofd, obase, nfd, nbase) }); err != nil {
		return &os.LinkError{Op: "rename", Old: d.abs(oldrel), New: d.abs(newrel), Err: err}
	}
	return nil
}

func (d *beneathDir) remove(rel string) error {
	pfd, base, err := d.parent("remove", rel)
	if err != nil {
		return err
	}
	defer syscall.Close(pfd)
	err = ignoringEINTR(func() error { return syscall.Unlinkat(pfd, base) })
	if err == syscall.EISDIR {
		p, perr := syscall.BytePtrFromString(base)
		if perr != nil {
			return perr
		}
		err = ignoringEINTR(func() error {
			_, _, e := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(pfd), uintptr(unsafe.Pointer(p)), atRemovedir)
			if e != 0 {
				return e
			}
			return nil
		})
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: d.abs(rel), Err: err}
	}
	return nil
}

func ignoringEINTR(f func() error) error {
	for {
		err := f()
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// ignoringEINTRN is ignoringEINTR for a call that also returns a count.
func ignoringEINTRN(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
