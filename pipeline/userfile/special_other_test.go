//go:build !unix

package userfile

import "testing"

func specialFiles(*testing.T, string) map[string]string { return nil }
