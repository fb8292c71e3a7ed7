/* moocore_bench.c: times moocore's fpli_hv() on a front file, for the
   comparison in docs/performance.md ("Against HV3D+ / HV4D+").

   moocore (https://github.com/multi-objective/moocore) is not vendored here;
   build this driver against a checkout of its c/ directory:

     gcc -O3 -march=native -DNDEBUG -I$MOOCORE/c -o /tmp/moocore_bench \
         hv/testdata/refbench/moocore_bench.c \
         $MOOCORE/c/hv.c $MOOCORE/c/hv3dplus.c $MOOCORE/c/hv4d.c -lm

   (add -DNEWEST_API for versions whose fpli_hv takes (data, n, dim, ref);
   the copy measured in docs/performance.md, assembled from several commits,
   also needed -DDEBUG=0 '-DASAN_POISON_MEMORY_REGION(addr,size)=((void)(addr),(void)(size))'),
   then, with the fronts of `go test ./hv -run TestWriteFronts -fronts /tmp/fronts`:

     /tmp/moocore_bench /tmp/fronts/concave_d4_n1000.txt      # per call, >= 0.5 s of calls
     /tmp/moocore_bench /tmp/fronts/concave_d4_n1000.txt -1   # one call, file reading included

   Usage: bench FILE [MIN_SECONDS | -1]
   Reads points (one per line, whitespace separated), which are to be
   MAXIMISED with reference point 0.  Converts to minimisation by negating
   every coordinate; the reference point stays at 0.
   Repeats fpli_hv() until at least MIN_SECONDS (default 0.5) have elapsed;
   MIN_SECONDS = -1 means exactly one call (for end-to-end comparison). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hv.h"
#ifdef NEWEST_API /* hv.c@00e41dea: fpli_hv(data, n, dim, ref) */
# define HV_CALL(data, d, n, ref) fpli_hv((data), (size_t)(n), (uint_fast8_t)(d), (ref))
#else
# define HV_CALL(data, d, n, ref) fpli_hv((data), (d), (n), (ref))
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double *read_points(const char *fname, int *d_out, int *n_out)
{
    FILE *f = fopen(fname, "r");
    if (!f) { perror(fname); exit(1); }
    size_t cap = 1024, len = 0;
    double *v = malloc(cap * sizeof(*v));
    int d = 0, n = 0;
    char *line = NULL;
    size_t lcap = 0;
    while (getline(&line, &lcap, f) > 0) {
        char *p = line, *end;
        int k = 0;
        while (1) {
            double x = strtod(p, &end);
            if (end == p) break;
            if (len == cap) { cap *= 2; v = realloc(v, cap * sizeof(*v)); }
            v[len++] = x;
            k++;
            p = end;
        }
        if (k == 0) continue;
        if (d == 0) d = k;
        else if (k != d) { fprintf(stderr, "%s: inconsistent dimension\n", fname); exit(1); }
        n++;
    }
    free(line);
    fclose(f);
    *d_out = d; *n_out = n;
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [MIN_SECONDS|-1]\n", argv[0]); return 1; }
    double min_sec = (argc > 2) ? atof(argv[2]) : 0.5;
    double t_start = now();
    int d, n;
    double *data = read_points(argv[1], &d, &n);
    for (size_t i = 0; i < (size_t) d * n; i++)
        data[i] = -data[i]; /* maximisation -> minimisation */
    double *ref = calloc(d, sizeof(*ref)); /* reference point 0 */

    if (min_sec < 0) { /* single call, end-to-end */
        double t0 = now();
        double hv = HV_CALL(data, d, n, ref);
        double t1 = now();
        printf("file=%s d=%d n=%d hv=%.17g reps=1 time_per_call=%.9e s total_incl_io=%.6f s\n",
               argv[1], d, n, hv, t1 - t0, t1 - t_start);
        return 0;
    }

    volatile double sink = 0;
    double hv = HV_CALL(data, d, n, ref); /* warm-up */
    long reps = 1;
    double elapsed;
    while (1) {
        double t0 = now();
        for (long r = 0; r < reps; r++)
            sink += HV_CALL(data, d, n, ref);
        elapsed = now() - t0;
        if (elapsed >= min_sec) break;
        /* grow reps towards min_sec */
        double factor = (elapsed > 0) ? 1.2 * min_sec / elapsed : 10;
        if (factor < 2) factor = 2;
        if (factor > 100) factor = 100;
        reps = (long)(reps * factor) + 1;
    }
    (void) sink;
    printf("file=%s d=%d n=%d hv=%.17g reps=%ld time_per_call=%.9e s\n",
           argv[1], d, n, hv, reps, elapsed / reps);
    free(data); free(ref);
    return 0;
}
