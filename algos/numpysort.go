package algos

// numpyArgsort writes into idx the permutation that NumPy 1.24's default
// np.argsort (kind "quicksort") returns for keys: the init_ties reading
// numpy_argsort, "the k arms with smallest N_i" written as
// np.argsort(N)[:k] in the paper's stated environment (Python 3.11.2,
// NumPy 1.24.2). NumPy's quicksort is an introsort that is not stable, so
// among arms of equally few pulls it picks a fixed but scrambled set.
//
// It follows aquicksort_ and aheapsort_ of numpy/core/src/npysort
// (quicksort.cpp, heapsort.cpp) step for step, with indices in place of
// pointers: median of three, the partition loop, the larger part pushed,
// insertion sort below 16 elements, heapsort past a depth of 2·⌊log2 n⌋.
// TestNumpyArgsort checks it against NumPy 1.24.2 itself.
func numpyArgsort(keys []int, idx []int) {
	const smallQuicksort = 15
	n := len(keys)
	for i := range idx[:n] {
		idx[i] = i
	}
	less := func(a, b int) bool { return keys[a] < keys[b] }
	type part struct{ pl, pr, depth int }
	var stack []part
	pl, pr := 0, n-1
	cdepth := 0
	for m := n; m > 1; m >>= 1 { // npy_get_msb(n) * 2
		cdepth++
	}
	cdepth *= 2
	for {
		if cdepth < 0 {
			numpyHeapsort(keys, idx[pl:pr+1])
		} else {
			for pr-pl > smallQuicksort {
				pm := pl + (pr-pl)>>1
				if less(idx[pm], idx[pl]) {
					idx[pm], idx[pl] = idx[pl], idx[pm]
				}
				if less(idx[pr], idx[pm]) {
					idx[pr], idx[pm] = idx[pm], idx[pr]
				}
				if less(idx[pm], idx[pl]) {
					idx[pm], idx[pl] = idx[pl], idx[pm]
				}
				vp := keys[idx[pm]]
				pi, pj := pl, pr-1
				idx[pm], idx[pj] = idx[pj], idx[pm]
				for {
					for pi++; keys[idx[pi]] < vp; pi++ {
					}
					for pj--; vp < keys[idx[pj]]; pj-- {
					}
					if pi >= pj {
						break
					}
					idx[pi], idx[pj] = idx[pj], idx[pi]
				}
				pk := pr - 1
				idx[pi], idx[pk] = idx[pk], idx[pi]
				// The larger part waits on the stack.
				cdepth--
				if pi-pl < pr-pi {
					stack = append(stack, part{pi + 1, pr, cdepth})
					pr = pi - 1
				} else {
					stack = append(stack, part{pl, pi - 1, cdepth})
					pl = pi + 1
				}
			}
			for pi := pl + 1; pi <= pr; pi++ { // insertion sort
				vi := idx[pi]
				vp := keys[vi]
				pj := pi
				for pj > pl && vp < keys[idx[pj-1]] {
					idx[pj] = idx[pj-1]
					pj--
				}
				idx[pj] = vi
			}
		}
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pl, pr, cdepth = top.pl, top.pr, top.depth
	}
}

// numpyHeapsort is NumPy's aheapsort_ on the indices a (1-based inside).
func numpyHeapsort(keys []int, tosort []int) {
	n := len(tosort)
	a := func(i int) *int { return &tosort[i-1] }
	less := func(x, y int) bool { return keys[x] < keys[y] }
	for l := n >> 1; l > 0; l-- {
		tmp := *a(l)
		i, j := l, l<<1
		for j <= n {
			if j < n && less(*a(j), *a(j + 1)) {
				j++
			}
			if !less(tmp, *a(j)) {
				break
			}
			*a(i) = *a(j)
			i, j = j, j+j
		}
		*a(i) = tmp
	}
	for n > 1 {
		tmp := *a(n)
		*a(n) = *a(1)
		n--
		i, j := 1, 2
		for j <= n {
			if j < n && less(*a(j), *a(j + 1)) {
				j++
			}
			if !less(tmp, *a(j)) {
				break
			}
			*a(i) = *a(j)
			i, j = j, j+j
		}
		*a(i) = tmp
	}
}
