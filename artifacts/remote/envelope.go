package remote

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"thv/artifacts"
)

// envelopeFormat names the file format of a remote index entry.
const envelopeFormat = "thv-remote-entry 1"

// envelope is a remote index file: the exact bytes of a local index entry
// (artifacts.EncodeEntry) and an ed25519 signature over them and the key
// they are filed under, with the public key that made it.
type envelope struct {
	Format    string `json:"format"`
	Entry     []byte `json:"entry"` // base64 in the JSON
	Signer    string `json:"signer,omitempty"`
	PublicKey []byte `json:"public_key,omitempty"`
	Signature []byte `json:"signature,omitempty"`
}

// signedMessage is what a signature covers: the format, the task key the
// entry is filed under and the entry's bytes, so a signature can be moved
// to no other key and no other entry.
func signedMessage(k artifacts.Key, entry []byte) []byte {
	msg := make([]byte, 0, len(envelopeFormat)+2+64+len(entry))
	msg = append(msg, envelopeFormat...)
	msg = append(msg, 0)
	msg = append(msg, k.Hex()...)
	msg = append(msg, 0)
	return append(msg, entry...)
}

// sealEntry encodes e and signs it with key.
func sealEntry(e artifacts.Entry, key *PrivateKey) ([]byte, error) {
	entry, err := artifacts.EncodeEntry(e)
	if err != nil {
		return nil, err
	}
	env := envelope{Format: envelopeFormat, Entry: entry}
	if key != nil {
		pub := key.Public()
		env.Signer, env.PublicKey = pub.Name, pub.Key
		env.Signature = ed25519.Sign(key.Key, signedMessage(e.Key, entry))
	}
	data, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Reasons a remote entry is not used.
var (
	ErrUnsigned     = errors.New("the remote entry is not signed")
	ErrUntrusted    = errors.New("the remote entry is signed by a key that is not trusted")
	ErrBadSignature = errors.New("the remote entry's signature does not verify")
	ErrBadEntry     = errors.New("the remote entry is malformed")
)

// openEntry checks an envelope read from the remote under key k: strictly
// decoded, signed by one of trusted with a signature that verifies over
// these exact bytes and k, and holding a valid entry for k. The error says
// which check failed.
func openEntry(data []byte, k artifacts.Key, trusted []PublicKey) (artifacts.Entry, string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var env envelope
	if err := dec.Decode(&env); err != nil {
		return artifacts.Entry{}, "", fmt.Errorf("%w: %v", ErrBadEntry, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return artifacts.Entry{}, "", fmt.Errorf("%w: trailing data", ErrBadEntry)
	}
	if env.Format != envelopeFormat {
		return artifacts.Entry{}, "", fmt.Errorf("%w: format %q, want %q", ErrBadEntry, env.Format, envelopeFormat)
	}
	if len(env.Signature) == 0 || len(env.PublicKey) == 0 {
		return artifacts.Entry{}, "", ErrUnsigned
	}
	var signer *PublicKey
	for i := range trusted {
		if bytes.Equal(trusted[i].Key, env.PublicKey) {
			signer = &trusted[i]
			break
		}
	}
	if signer == nil {
		return artifacts.Entry{}, env.Signer, fmt.Errorf("%w (it names itself %q)", ErrUntrusted, env.Signer)
	}
	if !ed25519.Verify(signer.Key, signedMessage(k, env.Entry), env.Signature) {
		return artifacts.Entry{}, signer.Name, fmt.Errorf("%w under trusted key %q", ErrBadSignature, signer.Name)
	}
	e, err := artifacts.DecodeEntry(env.Entry, k)
	if err != nil {
		return artifacts.Entry{}, signer.Name, fmt.Errorf("%w: %v", ErrBadEntry, err)
	}
	return e, signer.Name, nil
}
