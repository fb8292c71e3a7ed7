//go:build unix

package main

import "syscall"

// limitAddressSpace makes an allocation beyond max bytes fail.
func limitAddressSpace(max int64) error {
	lim := syscall.Rlimit{Cur: uint64(max), Max: uint64(max)}
	return syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
}
