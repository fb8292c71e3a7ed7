package formats

import (
	"fmt"
	"strconv"

	"thv/artifacts/table"
)

// Instance is the instance table, the output of an instance task and an
// input of benchmark and run tasks: one row per arm, with columns arm,
// front (0/1) and mu_1 … mu_d. Its fields are those of envs.Instance.
type Instance struct {
	Means [][]float64 // Means[i][j] is objective j+1 of arm i (column mu_<j+1>)
	Front []bool      // Front[i] reports whether arm i was generated on the front
}

// EncodeInstance writes an instance table.
func EncodeInstance(in Instance) ([]byte, error) {
	n, d := len(in.Means), 0
	if n > 0 {
		d = len(in.Means[0])
	}
	arm := make([]int64, n)
	front := make([]int64, n)
	for i := range arm {
		if len(in.Means[i]) != d {
			return nil, fmt.Errorf("instance table: arm %d has %d objectives, arm 0 has %d", i, len(in.Means[i]), d)
		}
		arm[i] = int64(i)
		if i < len(in.Front) && in.Front[i] {
			front[i] = 1
		}
	}
	cols := []table.Column{table.Int64Column("arm", arm), table.Int64Column("front", front)}
	for j := range d {
		mu := make([]float64, n)
		for i := range mu {
			mu[i] = in.Means[i][j]
		}
		cols = append(cols, table.Float64Column(muColumn(j), mu))
	}
	return encode("instance", cols...)
}

// DecodeInstance reads an instance table. It does not check the means
// (envs.Instance.Validate does).
func DecodeInstance(b []byte) (Instance, error) {
	c := read("instance", b)
	front := c.int64s("front")
	var mus [][]float64
	for j := 0; c.has(muColumn(j)); j++ {
		mus = append(mus, c.float64s(muColumn(j)))
	}
	if err := c.check(); err != nil {
		return Instance{}, err
	}
	in := Instance{Means: make([][]float64, len(front)), Front: make([]bool, len(front))}
	for i := range in.Means {
		in.Front[i] = front[i] == 1
		in.Means[i] = make([]float64, len(mus))
		for j, mu := range mus {
			in.Means[i][j] = mu[i]
		}
	}
	return in, nil
}

// muColumn is the name of the column of objective j (from 0).
func muColumn(j int) string { return "mu_" + strconv.Itoa(j+1) }
