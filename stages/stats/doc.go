// Package stats holds the statistics of the THV results: the Student-t
// confidence interval of a mean over seeds ([MeanWithCI], [TCritical]), the
// one implementation behind every "mean ± CI" the pipeline writes (the
// summarize stage's cells, hence the tables and thv show, and the figures'
// bands), and the paired statistics of the paper's statistical-tests table,
// THV-UCB against the second-best baseline, paired by seed
// ([ComparePaired]: Wilcoxon signed-rank test, percentile bootstrap CI of
// the mean difference, paired Cohen's d).
//
// All are pure, deterministic functions. The paired statistics are checked
// against SciPy 1.10.1 / NumPy 1.24.2 (Debian 12): see
// testdata/gen_fixtures.py and testdata/scipy_fixtures.json.
package stats
