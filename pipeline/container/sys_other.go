//go:build !linux

package container

import "errors"

// Containers run on Linux: elsewhere New fails on the scratch store's
// mount, before any runtime is started.

var errNotLinux = errors.New("the container executor runs on Linux only")

func mountOut(string, int64) error { return errNotLinux }
func unmountOut(string) error      { return errNotLinux }

type cgroupMounts struct{}

func findCgroupMounts() cgroupMounts      { return cgroupMounts{} }
func (cgroupMounts) prepare(string) error { return errNotLinux }
func (cgroupMounts) needMemory() error    { return errNotLinux }

type cgroupUsage struct{ memPeak, pidsPeak, oomKills int64 }

func (cgroupMounts) usage(string) cgroupUsage { return cgroupUsage{-1, -1, -1} }
func (cgroupMounts) remove(string) error      { return nil }

func hostNproc() (cur, max uint64, ok bool) { return 0, 0, false }
