package render

import (
	"fmt"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	major := func(lo, hi float64) (out []string) {
		for _, tk := range (niceTicks{target: 6}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 5000, "[0 1000 2000 3000 4000 5000]"},
		{0, 600, "[0 100 200 300 400 500 600]"},
		{0.27, 0.94, "[0.3 0.4 0.5 0.6 0.7 0.8 0.9]"},
		{-0.1, 0.1, "[-0.10 -0.05 0.00 0.05 0.10]"},
	} {
		if got := fmt.Sprint(major(c.lo, c.hi)); got != c.want {
			t.Errorf("ticks(%v, %v) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
