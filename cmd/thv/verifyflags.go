package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"thv/pipeline"
)

// verifyFlags are the choices thv verify and thv verify-bundle share: how
// much to re-execute (everything, by default), how the sample is drawn,
// and the ceilings each re-executed task runs under.
type verifyFlags struct {
	sample      int
	all         bool
	seed        uint64
	jobs        int
	taskTimeout time.Duration
}

// defaultTaskTimeout is far above what any task of the paper's protocol
// needs (its largest, a run at d = 5, takes well under a second), far below what
// would hold a verification for good. The memory ceiling is the
// executor's (executorFlags).
const defaultTaskTimeout = 10 * time.Minute

func (f *verifyFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.sample, "sample", 0, "re-execute only a random sample of this many tasks, drawn per kind (a partial check; default: every task)")
	fl.BoolVar(&f.all, "all", false, "re-execute every task (the default; kept for scripts)")
	fl.Uint64Var(&f.seed, "seed", 0, "with --sample: the seed of the draw, to repeat an earlier sample (default: drawn at random and printed)")
	fl.IntVarP(&f.jobs, "jobs", "j", 2, "parallel executions")
	fl.DurationVar(&f.taskTimeout, "task-timeout", defaultTaskTimeout, "time ceiling of one re-executed task (0: none)")
	cmd.MarkFlagsMutuallyExclusive("sample", "all")
}

// options checks the flags and returns the verification options, the
// sample's seed drawn from the system's CSPRNG unless --seed repeats one
// (so that no one can know in advance which tasks a sample re-executes).
func (f *verifyFlags) options(cmd *cobra.Command) (pipeline.VerifyOptions, error) {
	if f.sample < 0 {
		return pipeline.VerifyOptions{}, fmt.Errorf("--sample %d: want a positive number of tasks (or no --sample: every task)", f.sample)
	}
	seedGiven := cmd.Flags().Changed("seed")
	if seedGiven && f.sample == 0 {
		return pipeline.VerifyOptions{}, fmt.Errorf("--seed: only with --sample (without it every task is re-executed and nothing is drawn)")
	}
	if f.jobs < 1 {
		return pipeline.VerifyOptions{}, fmt.Errorf("-j %d: want at least 1", f.jobs)
	}
	if f.taskTimeout < 0 {
		return pipeline.VerifyOptions{}, fmt.Errorf("--task-timeout %s: want a positive duration, or 0 for none", f.taskTimeout)
	}
	opt := pipeline.VerifyOptions{Sample: f.sample, Seed: f.seed, Jobs: f.jobs, TaskTimeout: f.taskTimeout}
	if f.sample > 0 && !seedGiven {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return opt, fmt.Errorf("drawing the sample's seed: %w", err)
		}
		opt.Seed = binary.LittleEndian.Uint64(b[:])
	}
	return opt, nil
}

// printSample tells how a sample was drawn and how to repeat it.
func (f *verifyFlags) printSample(w io.Writer, opt pipeline.VerifyOptions, repeat string) {
	if opt.Sample > 0 {
		fmt.Fprintf(w, "sample: %d tasks (and at least one of each kind) drawn with seed %d (repeat it: %s --sample %d --seed %d)\n", opt.Sample, opt.Seed, repeat, opt.Sample, opt.Seed)
	}
}

// sampleVerdict says what a sample that agreed shows, and what it cannot.
func sampleVerdict(rep *pipeline.VerifyReport) string {
	p, kind := rep.EscapeChance()
	checked, tasks := 0, 0
	for _, k := range rep.Kinds {
		checked += k.Checked
		tasks += k.Tasks
	}
	return fmt.Sprintf("a sample of %d of %d tasks re-executed and agreed; this is not a verification: a single forged task escapes a sample like this with probability up to %.0f%% (kind %s); run without --sample to re-execute every task",
		checked, tasks, 100*p, kind)
}

// byteSize is a flag value of bytes with binary units: 4GiB, 512MiB, 1000000.
type byteSize int64

func (b byteSize) String() string {
	v := int64(b)
	for _, u := range []struct {
		s string
		n int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.n && v%u.n == 0 {
			return strconv.FormatInt(v/u.n, 10) + u.s
		}
	}
	return strconv.FormatInt(v, 10)
}

func (b *byteSize) Set(s string) error {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		s string
		n int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n, ok := strings.CutSuffix(num, u.s); ok {
			num, mult = n, u.n
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return fmt.Errorf("want a positive whole number of bytes, KiB, MiB or GiB, e.g. 4GiB or 512MiB")
	}
	*b = byteSize(n * mult)
	return nil
}

func (*byteSize) Type() string { return "size" }
