//go:build !linux

package artifacts

// forceRootDir has no effect here: rootDir is the only implementation.
var forceRootDir = false

// openDirFS opens the store directory abs as a rootDir (os.Root).
func openDirFS(abs string) (dirFS, error) { return openRootDir(abs) }
