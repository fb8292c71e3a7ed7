package artifacts

import (
	"errors"
	"io/fs"
	"os"
)

// OpenForReading opens the store at dir for a command that only reads (a
// status, a listing, a dry run): like OpenExisting it creates nothing, but
// a directory that does not exist yet is an empty store rather than an
// error — reads find nothing there and writes fail — so that `thv status`
// on a fresh clone lists every task as new without creating .thv/. (The
// handle stays empty if another process creates the store meanwhile.)
func OpenForReading(dir string) (*Store, error) {
	s, err := OpenExisting(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	abs, rerr := absDir(dir)
	if rerr != nil {
		return nil, rerr
	}
	if _, serr := os.Lstat(abs); !errors.Is(serr, fs.ErrNotExist) {
		return nil, err
	}
	return newStore(abs, absentDir{abs}), nil
}
