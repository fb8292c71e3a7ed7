package formats

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sync"

	"thv/artifacts/table"
)

// Summary is the metrics of one bandit run: the one row of a run task's
// summary output (run.Summary), and one row per seed of a collect task's final output (collect.Final)
// output. Columns: algo, eta, seed, window, then SummaryColumns. The
// metrics are those of algos.Summary.
type Summary struct {
	Algo   string
	Eta    float64
	Seed   uint64
	Window int // rounds HVLast averages over

	HVLast      float64 // mean HV(S_t) over the last Window rounds
	VStar       float64 // exact best size-k hypervolume V*
	HVGreedy    float64 // HV(G*)
	VAlpha      float64 // the V the α-regret uses
	RegretAlpha float64 // Σ_t (α·VAlpha − HV(S_t)), signed
	RegretPos   float64 // Σ_t max(0, α·VAlpha − HV(S_t))
	RegretExact float64 // Σ_t (V* − HV(S_t))
}

// summaryMetrics are the metric columns of a summary table, in order.
var summaryMetrics = []metric[Summary, float64]{
	{"hv_last", func(s *Summary) *float64 { return &s.HVLast }},
	{"v_star", func(s *Summary) *float64 { return &s.VStar }},
	{"hv_greedy", func(s *Summary) *float64 { return &s.HVGreedy }},
	{"v_alpha", func(s *Summary) *float64 { return &s.VAlpha }},
	{"regret_alpha", func(s *Summary) *float64 { return &s.RegretAlpha }},
	{"regret_alpha_pos", func(s *Summary) *float64 { return &s.RegretPos }},
	{"regret_exact", func(s *Summary) *float64 { return &s.RegretExact }},
}

// SummaryColumns are the names of the metric columns of a summary table, in
// table order.
var SummaryColumns = func() []string {
	names := make([]string, len(summaryMetrics))
	for m, metric := range summaryMetrics {
		names[m] = metric.name
	}
	return names
}()

// EncodeSummaries writes a summary table, one row per element of rows.
func EncodeSummaries(rows []Summary) ([]byte, error) {
	n := len(rows)
	algo := make([]string, n)
	eta := make([]float64, n)
	seed := make([]int64, n)
	window := make([]int64, n)
	for r := range rows {
		algo[r], eta[r], seed[r], window[r] = rows[r].Algo, rows[r].Eta, int64(rows[r].Seed), int64(rows[r].Window)
	}
	cols := []table.Column{
		table.StringColumn("algo", algo), table.Float64Column("eta", eta),
		table.Int64Column("seed", seed), table.Int64Column("window", window),
	}
	for _, metric := range summaryMetrics {
		v := make([]float64, n)
		for r := range rows {
			v[r] = *metric.field(&rows[r])
		}
		cols = append(cols, table.Float64Column(metric.name, v))
	}
	b, err := encode("summary", cols...)
	if err == nil && n == 1 {
		encoded.remember(b, storedAs(rows[0]))
	}
	return b, err
}

// DecodeSummary reads the summary table of one run (one row).
func DecodeSummary(b []byte) (Summary, error) {
	if s, ok := encoded.recall(b); ok {
		return s, nil
	}
	rows, err := DecodeSummaries(b)
	if err != nil {
		return Summary{}, err
	}
	if len(rows) != 1 {
		return Summary{}, fmt.Errorf("summary table: %d rows, want 1", len(rows))
	}
	return rows[0], nil
}

// DecodeSummaries reads a summary table.
func DecodeSummaries(b []byte) ([]Summary, error) {
	c := read("summary", b)
	algo, eta, seed, window := c.strings("algo"), c.float64s("eta"), c.int64s("seed"), c.int64s("window")
	vals := make([][]float64, len(summaryMetrics))
	for m, metric := range summaryMetrics {
		vals[m] = c.float64s(metric.name)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]Summary, len(algo))
	for r := range rows {
		rows[r] = Summary{Algo: algo[r], Eta: eta[r], Seed: uint64(seed[r]), Window: int(window[r])}
		for m, metric := range summaryMetrics {
			*metric.field(&rows[r]) = vals[m][r]
		}
	}
	return rows, nil
}

// Metric returns the named metric column's value (SummaryColumns) and
// whether the summary has it.
func (s *Summary) Metric(name string) (float64, bool) { return metricOf(summaryMetrics, s, name) }

// encoded remembers the one-row summaries this process encoded, by the
// SHA-256 of their bytes, so that a task that reads a run's summary in the
// process that ran it (collect, etaselect) takes the row instead of
// decoding it again: opening a one-row Parquet table costs about 100 µs,
// hashing it about 1. Decoding those bytes gives that row bit for bit
// (TestSummaryRoundTrip), so a hit returns what decoding would; any other
// bytes, altered ones included, are decoded. It is emptied when full.
var encoded summaryMemo

// summaryMemoMax bounds the summaries remembered (a reading instance
// encodes about 3,500: one per simulated run).
const summaryMemoMax = 1 << 13

type summaryMemo struct {
	mu   sync.Mutex
	rows map[[sha256.Size]byte]Summary
}

// storedAs is s as its table stores it: every NaN as the one NaN Encode
// writes (table.Float64Column).
func storedAs(s Summary) Summary {
	if s.Eta != s.Eta {
		s.Eta = math.NaN()
	}
	for _, metric := range summaryMetrics {
		if v := metric.field(&s); *v != *v {
			*v = math.NaN()
		}
	}
	return s
}

func (m *summaryMemo) remember(b []byte, s Summary) {
	key := sha256.Sum256(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil || len(m.rows) >= summaryMemoMax {
		m.rows = make(map[[sha256.Size]byte]Summary)
	}
	m.rows[key] = s
}

func (m *summaryMemo) recall(b []byte) (Summary, bool) {
	key := sha256.Sum256(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.rows[key]
	return s, ok
}
