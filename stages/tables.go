package stages

import (
	"fmt"
	"strconv"

	"thv/artifacts"
	"thv/envs"
)

// Parquet layouts shared by several stages. Every table is an ordinary
// columnar table: one column per objective, one row per arm, run or seed.

// instanceTable: arm, front (0/1), mu_1 … mu_d.
func encodeInstance(in *envs.Instance) ([]byte, error) {
	n, d := in.N(), in.D()
	arm := make([]int64, n)
	front := make([]int64, n)
	for i := range arm {
		arm[i] = int64(i)
		if in.Front[i] {
			front[i] = 1
		}
	}
	cols := []artifacts.Column{{Name: "arm", Int64: arm}, {Name: "front", Int64: front}}
	for j := 0; j < d; j++ {
		mu := make([]float64, n)
		for i := range mu {
			mu[i] = in.Means[i][j]
		}
		cols = append(cols, artifacts.Column{Name: "mu_" + strconv.Itoa(j+1), Float64: mu})
	}
	return artifacts.EncodeParquet(artifacts.Table{Columns: cols})
}

func decodeInstance(b []byte) (*envs.Instance, error) {
	t, err := artifacts.DecodeParquet(b)
	if err != nil {
		return nil, fmt.Errorf("instance: %w", err)
	}
	front, err := t.Col("front")
	if err != nil {
		return nil, fmt.Errorf("instance: %w", err)
	}
	n := len(front.Int64)
	in := &envs.Instance{Means: make([][]float64, n), Front: make([]bool, n)}
	for i := range in.Front {
		in.Front[i] = front.Int64[i] == 1
	}
	for j := 1; ; j++ {
		c, err := t.Col("mu_" + strconv.Itoa(j))
		if err != nil {
			break
		}
		for i := range in.Means {
			in.Means[i] = append(in.Means[i], c.Float64[i])
		}
	}
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("instance: %w", err)
	}
	return in, nil
}

func floatCol(t artifacts.Table, name string) ([]float64, error) {
	c, err := t.Col(name)
	if err != nil {
		return nil, err
	}
	if c.Float64 == nil {
		return nil, fmt.Errorf("column %q is not float64", name)
	}
	return c.Float64, nil
}

func intCol(t artifacts.Table, name string) ([]int64, error) {
	c, err := t.Col(name)
	if err != nil {
		return nil, err
	}
	if c.Int64 == nil {
		return nil, fmt.Errorf("column %q is not int64", name)
	}
	return c.Int64, nil
}

func stringCol(t artifacts.Table, name string) ([]string, error) {
	c, err := t.Col(name)
	if err != nil {
		return nil, err
	}
	if c.String == nil {
		return nil, fmt.Errorf("column %q is not a string column", name)
	}
	return c.String, nil
}
