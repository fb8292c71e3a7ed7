package container

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a size in bytes as the --memory and --out-limit flags
// take it: a whole number with an optional binary unit, KiB, MiB or GiB
// (also K, M, G), e.g. "2GiB" or "512MiB".
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want a positive whole number of bytes, KiB, MiB or GiB, e.g. 2GiB", s)
	}
	return n * mult, nil
}

// sizeString writes n bytes in MiB, or KiB or bytes if not a whole number.
func sizeString(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
