//go:build !linux

package artifacts

import "os"

// syncfsSupported is false: without syncfs(2) a store fsyncs each write
// (durable.go).
const syncfsSupported = false

// syncfsFile is never called where syncfsSupported is false.
func syncfsFile(*os.File) error { return nil }

// forceRootDir has no effect here: rootDir is the only implementation.
var forceRootDir = false

// openDirFS opens the store directory abs as a rootDir (os.Root).
func openDirFS(abs string) (dirFS, error) { return openRootDir(abs) }
