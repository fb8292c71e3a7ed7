// pagmo_hv times pagmo's hypervolume algorithms (Debian package libpagmo-dev)
// on a file of points, one per line, under maximisation with the origin as
// reference point (pagmo minimises, so the points are negated):
//
//	g++ -O2 -o /tmp/pagmo_hv pagmo_hv.cpp -lpagmo
//	/tmp/pagmo_hv FILE REPS
//
// It prints the volume (%.17g) and the fastest of REPS runs of compute():
// hv3d (Beume et al., O(n log n)) for d = 3, hvwfg (WFG) otherwise.
#include <pagmo/utils/hypervolume.hpp>
#include <pagmo/utils/hv_algos/hv_hv3d.hpp>
#include <pagmo/utils/hv_algos/hv_hvwfg.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: pagmo_hv FILE REPS\n");
        return 2;
    }
    std::ifstream f(argv[1]);
    std::vector<pagmo::vector_double> pts;
    for (std::string line; std::getline(f, line);) {
        std::istringstream is(line);
        pagmo::vector_double p;
        for (double x; is >> x;) p.push_back(-x);
        if (!p.empty()) pts.push_back(p);
    }
    int reps = std::atoi(argv[2]);
    pagmo::vector_double ref(pts[0].size(), 0.0);
    pagmo::hypervolume hv(pts, false);
    pagmo::hv3d a3;
    pagmo::hvwfg aw;
    double v = 0, best = 1e300;
    for (int r = 0; r < reps; r++) {
        auto t0 = std::chrono::steady_clock::now();
        v = pts[0].size() == 3 ? hv.compute(ref, a3) : hv.compute(ref, aw);
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    std::printf("%.17g %.3f ms\n", v, best * 1e3);
}
