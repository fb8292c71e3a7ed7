package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// CanonicalProtocol returns the canonical form of a YAML protocol file:
// the same document (keys in their order, every scalar as written, flow
// and block styles kept) without comments, laid out by one encoder. A
// bundle holds its protocol in this form, so that every byte of it is
// what thv derives from the protocol's content: a comment can claim
// anything and no computation checks it (the commented original is the
// project's, e.g. source/params.yaml for the paper's protocol).
func CanonicalProtocol(data []byte) ([]byte, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the protocol file is empty")
		}
		return nil, fmt.Errorf("the protocol file: %w", err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		return nil, errors.New("the protocol file holds more than one YAML document")
	}
	stripComments(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("the protocol file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func stripComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		stripComments(c)
	}
}
