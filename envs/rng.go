package envs

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// NewStream returns a PCG random stream determined only by seed, a purpose
// label and optional integer identifiers. Every consumer of randomness in THV
// draws from its own stream, so adding a draw in one place never shifts the
// numbers seen by another, and nothing depends on a global source.
func NewStream(seed uint64, purpose string, ids ...uint64) *rand.Rand {
	return rand.New(NewPCG(seed, purpose, ids...))
}

// NewPCG is NewStream's generator itself, for a hot loop that draws from
// it directly (fmath.NormFloat64PCG): the same numbers as NewStream's.
func NewPCG(seed uint64, purpose string, ids ...uint64) *rand.PCG {
	return rand.NewPCG(pcgSeeds(seed, purpose, ids...))
}

// pcgSeeds returns the seeds NewPCG gives rand.NewPCG: the first 16
// bytes of the SHA-256 of seed, purpose, a zero byte and the ids, the
// integers little-endian. The message is built on the stack and hashed in
// one call: a bandit seeds a stream per arm, every run.
func pcgSeeds(seed uint64, purpose string, ids ...uint64) (uint64, uint64) {
	var buf [64]byte
	msg := binary.LittleEndian.AppendUint64(buf[:0], seed)
	msg = append(msg, purpose...)
	msg = append(msg, 0)
	for _, id := range ids {
		msg = binary.LittleEndian.AppendUint64(msg, id)
	}
	sum := sha256.Sum256(msg)
	return binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16])
}
