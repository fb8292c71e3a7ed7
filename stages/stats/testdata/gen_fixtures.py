"""Reference values for the paired statistics of stages/stats, from
independent implementations: SciPy's Wilcoxon signed-rank test and NumPy.

Regenerate with Debian's Python (apt-get install -y python3-scipy python3-numpy),
from the module root:

    /usr/bin/python3 stages/stats/testdata/gen_fixtures.py > stages/stats/testdata/scipy_fixtures.json

The JSON is plain RFC 8259 JSON (no NaN/Infinity tokens): non-finite NumPy
results are recorded as strings in *_nonfinite fields.

For every case d (a list of paired differences a - b) it records:

scipy_auto
    What the plain call scipy.stats.wilcoxon(d, alternative='greater') gives
    (zero_method='wilcox', correction=False, method='auto' are SciPy's
    defaults): p-value, statistic, the method 'auto' resolved to, any warning,
    or the error it raised. In SciPy 1.10.1 'auto' means: 'exact' when
    len(d) <= 50 (zeros included) and no zero difference, else 'approx';
    ties do NOT switch it to 'approx' (the exact table is then read at
    int(r_plus), which is not an exact p-value).

thv
    The reference for thv's rule, computed with SciPy:
      * drop zero differences; n = number left;
      * n == 0                         -> no SciPy call (1.10.1 raises
                                          ValueError, 'approx' cannot run);
                                          thv defines p = 1;
      * n <= 50 and no ties in |d|     -> wilcoxon(d[d != 0], alternative='greater',
                                          method='exact')
      * otherwise                      -> wilcoxon(d, alternative='greater',
                                          zero_method='wilcox', method='approx',
                                          correction=False)
        (normal approximation with the tie-corrected variance, no continuity
        correction: SciPy's default). p_with_continuity_correction is the same
        call with correction=True, for information only.

norm_sf
    [z, scipy.stats.norm.sf(z)] pairs: the upper normal tail used by the
    normal approximation.

cohens_d
    Paired Cohen's d = mean(d) / std(d, ddof=1) with NumPy; null when it is not
    finite (then cohens_d_nonfinite says what NumPy gives).

Cases given as a and b (HV_last100 per seed) have d computed as a - b in
IEEE double, the same operation Go performs; mean_d is NumPy's mean(d).
"""
import json
import sys
import warnings

import numpy as np
import scipy
from scipy import stats

COMMAND = "/usr/bin/python3 stages/stats/testdata/gen_fixtures.py > stages/stats/testdata/scipy_fixtures.json"

# HV_last100 of 10 seeds for two algorithms (made-up, realistic magnitudes).
HV_A = [0.658213, 0.661047, 0.654396, 0.659871, 0.662530, 0.657104, 0.660388, 0.655927, 0.663215, 0.658742]
HV_B = [0.652871, 0.656302, 0.655818, 0.653140, 0.657966, 0.654512, 0.653027, 0.656419, 0.657703, 0.652286]

rng = np.random.default_rng(20240601)
LARGE_60 = [float(x) for x in np.round(rng.normal(0.002, 0.004, 60), 9)]
BOUNDARY_50 = [float(x) for x in np.round(rng.normal(0.001, 0.004, 50), 9)]
BOUNDARY_51 = [float(x) for x in np.round(rng.normal(0.001, 0.004, 51), 9)]

CASES = [
    # name, d or (a, b), description
    ("typical_n10", [0.0012, 0.0008, -0.0003, 0.0015, 0.0004, 0.0021, 0.0007, -0.0001, 0.0011, 0.0005],
     "HV differences of order 1e-3, two losses, no ties: exact"),
    ("hv_pairs_n10", (HV_A, HV_B), "given as a, b (HV_last100 per seed); d = a - b has no ties: exact"),
    ("all_positive_n10", [0.001 * (i + 1) + 0.0001 * i * i for i in range(10)], "every seed won: p = 1/1024"),
    ("all_negative_n10", [-0.0007 * (i + 1) for i in range(10)], "every seed lost: p = 1"),
    ("mixed_n12", [0.003, -0.002, 0.005, 0.001, -0.004, 0.006, 0.007, -0.0005, 0.009, 0.0015, 0.0025, -0.0035],
     "mixed signs, no ties: exact"),
    ("ties_n10", [0.001, 0.001, -0.001, 0.002, 0.002, 0.002, 0.003, -0.003, 0.004, 0.005],
     "ties in |d| (some of opposite sign), no zeros: normal approximation"),
    ("zeros_n10", [0.0, 0.001, 0.002, 0.0, -0.0015, 0.003, 0.004, 0.005, -0.0025, 0.006],
     "two zero differences, no ties among the rest: exact on the 8 nonzero"),
    ("zeros_ties_n12", [0.0, 0.002, 0.002, -0.002, 0.0, 0.004, 0.001, 0.003, 0.003, -0.001, 0.005, 0.0],
     "zeros and ties: normal approximation on the 9 nonzero"),
    ("zero_and_one_n2", [0.0, 0.003], "one zero, one positive: exact on n = 1, p = 1/2"),
    ("n1_positive", [0.004], "n = 1, won: p = 1/2"),
    ("n1_negative", [-0.004], "n = 1, lost: p = 1"),
    ("n2", [0.005, -0.002], "n = 2"),
    ("n3_positive", [0.001, 0.002, 0.003], "n = 3, all won: p = 1/8"),
    ("ties_n20", [round(0.001 * ((i * 7) % 5 - 1), 6) or 0.003 for i in range(20)],
     "n = 20 with heavy ties: normal approximation"),
    ("all_tied_mixed_n4", [0.001, 0.001, -0.001, -0.001], "every |d| tied, two each sign"),
    ("constant_positive_n5", [0.25] * 5, "identical positive differences: sd = 0, all tied"),
    ("identical_runs_n10", [0.0] * 10, "a == b on every seed: all differences zero"),
    ("boundary_n50", BOUNDARY_50, "n = 50, no ties: exact (largest exact n)"),
    ("boundary_n51", BOUNDARY_51, "n = 51, no ties: normal approximation"),
    ("large_n60", LARGE_60, "n = 60, no ties: normal approximation"),
]


def jfloat(x):
    x = float(x)
    return x if np.isfinite(x) else None


def scipy_auto(d):
    out = {}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            res = stats.wilcoxon(d, alternative="greater")
            out["p"] = jfloat(res.pvalue)
            out["statistic"] = jfloat(res.statistic)
        except ValueError as e:
            out["error"] = "ValueError: " + str(e)
    # The resolution of method='auto' in SciPy 1.10.1 (_morestats.wilcoxon).
    out["method"] = "exact" if len(d) <= 50 and not any(x == 0 for x in d) else "approx"
    msgs = sorted({str(x.message) for x in w})
    if msgs:
        out["warnings"] = msgs
    return out


def thv_reference(d):
    nz = [x for x in d if x != 0]
    n = len(nz)
    ties = len({abs(x) for x in nz}) < n
    ref = {"n_nonzero": n, "zeros": len(d) - n, "ties": ties}
    if n == 0:
        ref.update(method="none", p=1.0, scipy_call=None)
        return ref
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if n <= 50 and not ties:
            res = stats.wilcoxon(nz, alternative="greater", method="exact")
            ref.update(method="exact", p=float(res.pvalue), statistic=float(res.statistic),
                       scipy_call="wilcoxon(d[d != 0], alternative='greater', method='exact')")
        else:
            res = stats.wilcoxon(d, alternative="greater", zero_method="wilcox", method="approx", correction=False)
            cc = stats.wilcoxon(d, alternative="greater", zero_method="wilcox", method="approx", correction=True)
            ref.update(method="approx", p=float(res.pvalue), statistic=float(res.statistic),
                       z=float(res.zstatistic), p_with_continuity_correction=float(cc.pvalue),
                       scipy_call="wilcoxon(d, alternative='greater', zero_method='wilcox', "
                                  "method='approx', correction=False)")
    return ref


def main():
    out = {"provenance": {
        "generator": "stages/stats/testdata/gen_fixtures.py",
        "command": COMMAND,
        "scipy": scipy.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
        "scipy_source": "scipy/stats/_morestats.py (wilcoxon), scipy/stats/_hypotests.py (_get_wilcoxon_distr)",
    }, "cases": []}
    for name, data, desc in CASES:
        case = {"name": name, "description": desc}
        if isinstance(data, tuple):
            a, b = (np.array(v, dtype=float) for v in data)
            d = a - b
            case["a"], case["b"] = a.tolist(), b.tolist()
        else:
            d = np.array(data, dtype=float)
        case["d"] = d.tolist()
        case["mean_d"] = float(np.mean(d))
        case["wins"] = int(np.sum(d > 0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cd = np.float64(np.mean(d)) / np.std(d, ddof=1) if len(d) > 0 else np.nan
        case["cohens_d"] = jfloat(cd)
        if case["cohens_d"] is None:
            case["cohens_d_nonfinite"] = str(cd)
        case["thv"] = thv_reference(d.tolist())
        case["scipy_auto"] = scipy_auto(d.tolist())
        auto = case["scipy_auto"]
        case["scipy_auto_equals_thv"] = auto.get("p") is not None and auto["p"] == case["thv"]["p"]
        out["cases"].append(case)
    # The standard normal upper tail that the normal approximation uses.
    zs = [-40.0, -8.0, -3.0, -1.0, -0.7, -0.1, 0.0, 0.2, 0.7071067811865476, 1.0, 1.5, 2.2360679774997896,
          3.3, 8.0, 12.0, 20.0, 38.0]
    out["norm_sf"] = [[z, float(stats.norm.sf(z))] for z in zs]
    json.dump(out, sys.stdout, indent=1, allow_nan=False)
    print()


if __name__ == "__main__":
    main()
