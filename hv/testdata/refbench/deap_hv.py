"""deap_hv times the C extension of DEAP (Debian package python3-deap),
Fonseca, Paquete and Lopez-Ibanez's dimension-sweep hypervolume, on a file
of points under maximisation with the origin as reference point:

    /usr/bin/python3 deap_hv.py FILE REPS

It prints the volume (%.17g) and the fastest of REPS calls (the call
includes converting the Python lists).
"""
import sys
import time

from deap.tools._hypervolume import hv

pts = [[-float(x) for x in line.split()] for line in open(sys.argv[1]) if line.strip()]
ref = [0.0] * len(pts[0])
best = float("inf")
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    v = hv.hypervolume(pts, ref)
    best = min(best, time.perf_counter() - t0)
print("%.17g %.3f ms" % (v, best * 1e3))
