//go:build !linux

package main

import "errors"

// probeSyscalls: the syscall probe is Linux's (containers run on Linux).
func probeSyscalls() map[string]string { return nil }

func fsSize(string) (uint64, error) { return 0, errors.New("statfs: Linux only") }

func blockThreads(int) {}
