package stages

import "thv/envs"

// InstanceParams identify one synthetic instance.
type InstanceParams struct {
	Geometry string `json:"geometry"`
	D        int    `json:"d"`
	N        int    `json:"n"`
	Seed     uint64 `json:"seed"`
}

func init() {
	register(Kind{Name: "instance", Sources: []string{"envs", "stages/instance.go"}, Run: runInstance})
}

// runInstance generates the paper's instance: output "instance" (arm, front, mu_1..mu_d).
func runInstance(params []byte, _ Inputs) (Outputs, error) {
	p, err := decode[InstanceParams](params)
	if err != nil {
		return nil, err
	}
	in, err := envs.Generate(envs.Geometry(p.Geometry), p.D, p.N, p.Seed)
	if err != nil {
		return nil, err
	}
	b, err := encodeInstance(in)
	if err != nil {
		return nil, err
	}
	return Outputs{"instance": b}, nil
}
