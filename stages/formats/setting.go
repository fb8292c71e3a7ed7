package formats

// Setting describes an experimental setting in the parameters of the kinds
// that caption or name their outputs by it (tables, figures).
type Setting struct {
	Name  string  `json:"name"`
	D     int     `json:"d"`
	N     int     `json:"n"`
	K     int     `json:"k"`
	T     int     `json:"T"`
	Sigma float64 `json:"sigma"`
	Seeds int     `json:"seeds"`
}
