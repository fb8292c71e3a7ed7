// Package config is the protocol's configuration: params.yaml (embedded,
// or a file of the user's) with its profile, THV_* variables and --set
// overrides layered, decoded strictly into a Config by viper, validated
// against the algorithms' registry and the protocol's ceilings, and
// described against the paper's own protocol.
//
// A protocol is untrusted input (a bundle's is someone else's): every
// limit is checked before the work it bounds, and every error names the
// key and the value as written.
package config
