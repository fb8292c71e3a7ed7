//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// unread is the number of bytes in the pipe w writes to that its reader
// has not read yet (FIONREAD).
func unread(t *testing.T, w *os.File) int {
	t.Helper()
	var n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, w.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("FIONREAD: %v", e)
	}
	return int(n)
}

// feed writes a line of points to thv hv's standard input and waits until
// thv has read it: thv is then alive and reading, its signal handling set up.
func feed(t *testing.T, w *os.File) {
	t.Helper()
	if _, err := w.WriteString("1 2\n"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); unread(t, w) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("thv hv did not read its input within 20 s")
		}
	}
}

// TestSecondSignalExits: thv hv blocks reading a pipe that never closes,
// where it does not watch its context. The first SIGINT or SIGTERM cancels
// the context (thv goes on reading: it is still alive and reads the next
// line); the second ends thv at once with 130 or 143 and one line (only
// one, though the test may send it more than once: see below).
func TestSecondSignalExits(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "interrupt (SIGINT)"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			cmd := exec.Command(bin, "hv")
			cmd.Stdin = r
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer cmd.Process.Kill()
			feed(t, w)
			cmd.Process.Signal(c.sig)
			feed(t, w) // the first signal did not end it
			// The second signal, again until thv ends: a signal sent
			// while the same one is still pending (the kernel's, or the
			// Go runtime's until its signal loop has taken the first) is
			// merged with it, as a Ctrl-C pressed twice too fast is.
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var werr error
			deadline := time.After(20 * time.Second)
		wait:
			for {
				cmd.Process.Signal(c.sig)
				select {
				case werr = <-done:
					break wait
				case <-time.After(200 * time.Millisecond):
				case <-deadline:
					t.Fatal("thv still runs 20 s after the second signal")
				}
			}
			var exit *exec.ExitError
			if !errors.As(werr, &exit) || exit.ExitCode() != c.code {
				t.Fatalf("exit %v, want status %d; stderr:\n%s", werr, c.code, stderr.String())
			}
			want := "thv: second " + c.name + ": exiting now, without cleaning up (the next thv removes what is left)\n"
			if stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("stderr %q, stdout %q; want stderr %q", stderr.String(), stdout.String(), want)
			}
		})
	}
}
