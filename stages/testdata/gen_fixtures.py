"""Reference values for stages/pairedstats_test.go, from an independent
implementation: SciPy's Wilcoxon signed-rank test and NumPy.

Run with Debian's Python (apt-get install python3-scipy python3-numpy):
    /usr/bin/python3 stages/testdata/gen_fixtures.py > stages/testdata/scipy_fixtures.json

For each case: scipy.stats.wilcoxon(d, alternative='greater', zero_method='wilcox',
method=M) with M = 'exact' when d has no zeros and no ties in |d| (n <= 50),
else M = 'approx' (with correction=True), which is the rule thv applies; and
paired Cohen's d = mean(d) / std(d, ddof=1).
"""
import json
import sys

import numpy as np
import scipy
from scipy import stats

cases = {
    "typical_n10": [0.012, 0.008, -0.003, 0.015, 0.004, 0.021, 0.007, -0.001, 0.011, 0.005],
    "all_positive_n10": [0.1 * (i + 1) for i in range(10)],
    "all_negative_n10": [-0.01 * (i + 1) for i in range(10)],
    "mixed_n12": [0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.7, -0.05, 0.9, 0.15, 0.25, -0.35],
    "ties_n10": [0.01, 0.01, -0.01, 0.02, 0.02, 0.02, 0.03, -0.03, 0.04, 0.05],
    "zeros_n10": [0.0, 0.01, 0.02, 0.0, -0.01, 0.03, 0.04, 0.05, -0.02, 0.06],
    "n1": [0.5],
    "n2": [0.5, -0.2],
    "n3": [0.1, 0.2, 0.3],
    "ties_n20": [round(0.01 * ((i * 7) % 5 - 1), 2) or 0.03 for i in range(20)],
    "hv_like_n10": [0.6556 - x for x in [0.6502, 0.6493, 0.6571, 0.6489, 0.6512, 0.6530, 0.6477, 0.6560, 0.6501, 0.6495]],
}

out = {"provenance": {
    "generator": "stages/testdata/gen_fixtures.py",
    "command": "/usr/bin/python3 stages/testdata/gen_fixtures.py > stages/testdata/scipy_fixtures.json",
    "scipy": scipy.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
}, "cases": []}
for name, d in cases.items():
    d = [float(x) for x in d]
    nz = [x for x in d if x != 0]
    absd = [abs(x) for x in nz]
    exact = len(nz) == len(d) and len(set(absd)) == len(absd) and len(nz) <= 50
    method = "exact" if exact else "approx"
    res = stats.wilcoxon(d, alternative="greater", zero_method="wilcox", method=method, correction=True)
    arr = np.array(d)
    cohen = float(arr.mean() / arr.std(ddof=1)) if len(d) > 1 and arr.std(ddof=1) > 0 else None
    out["cases"].append({"name": name, "d": d, "method": method,
                         "wilcoxon_statistic": float(res.statistic), "wilcoxon_p": float(res.pvalue),
                         "cohens_d": cohen})
json.dump(out, sys.stdout, indent=1)
print()
