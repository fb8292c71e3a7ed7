package main

import (
	"context"
	"errors"
	"os"
	"strings"
)

// Exit statuses. A script tells the outcomes of thv verify, thv
// verify-bundle and thv compare apart by them (README.md, "Exit status");
// any other command exits 0 or, on an error, 1.
const (
	// exitVerified: the check ran whole and everything agreed.
	exitVerified = 0
	// exitRejected: the check ran and found a difference (a task that
	// does not reproduce, a file that differs, a forged bundle; compare:
	// a value that differs or is missing, a claim that fails, as
	// --fail-on asks).
	exitRejected = 1
	// exitUsage: the command was called wrongly, or an input it names is
	// missing or unreadable: nothing was checked.
	exitUsage = 2
	// exitNotChecked: the check could not be made here, no verdict either
	// way: this machine failed (a full disk, a read-only store), this thv
	// computes other keys than the bundle's (other code), or the values
	// are not comparable with the paper's.
	exitNotChecked = 3
	// exitSample: a random sample re-executed and agreed (--sample): a
	// partial check, not a verification.
	exitSample = 4
	// An interrupted command (Ctrl-C, SIGTERM) exits 128 + the signal's
	// number, as a shell reports a process the signal ended: 130, 143.
)

// exitError is an error that decides the exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// rejected, notChecked and usageError give err its exit status.
func rejected(err error) error   { return &exitError{exitRejected, err} }
func notChecked(err error) error { return &exitError{exitNotChecked, err} }
func usageError(err error) error { return &exitError{exitUsage, err} }

// sampleAgreed is the outcome of a sample that agreed: said on stdout
// already, it prints nothing more.
var sampleAgreed = &exitError{exitSample, errors.New("")}

// exitStatus is the status of a command that returned err, given whether
// a signal interrupted it (sig, or nil).
func exitStatus(ctx context.Context, err error, sig os.Signal) int {
	if err == nil {
		return exitVerified
	}
	if sig != nil && ctx.Err() != nil {
		return 128 + signalNumber(sig)
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	if isUsage(err) {
		return exitUsage
	}
	return 1
}

// isUsage reports cobra's errors of a command line: an unknown command or
// flag, a bad flag value, the wrong number of arguments.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument", "accepts ", "requires at least", "requires at most", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// asCheck classifies the error of a check (verify, verify-bundle): one
// already classified keeps its status, any other is "not checked": the
// check did not reach a verdict.
func asCheck(err error) error {
	var e *exitError
	if err == nil || errors.As(err, &e) {
		return err
	}
	if isUsage(err) {
		return usageError(err)
	}
	return notChecked(err)
}
