// Package config is the protocol's configuration: params.yaml (embedded,
// or a file of the user's) with its profile, THV_* variables and --set
// overrides layered, decoded strictly into a Config by viper, validated
// against the algorithms' registry and the protocol's ceilings, and
// described against the paper's own protocol.
//
// A protocol is untrusted input (a bundle's is someone else's): every
// limit is checked before the work it bounds, and every error names the
// key and the value as written.
//
// The layers are merged on the file's YAML tree, not by viper, whose
// layers cannot hold what the protocol says; viper decodes the merged tree
// in one UnmarshalExact:
//   - a --set may replace a mapping by a value and then by a mapping again,
//     which drops the file's keys below it: a layer of viper's cannot
//     delete the keys of the layers under it;
//   - a --set reaches into lists (algorithms.THV-UCB.eta, seeds.0): viper's
//     keys stop at lists;
//   - MergeConfigMap silently ignores a value given for a mapping, which a
//     profile must be refused for, and costs the square of a mapping's width;
//   - AutomaticEnv reads the process's environment, not LoadOptions.Environ
//     (the paper's protocol ignores the process's), and hands a variable
//     over as a string, unchecked by the file's limits, without its name.
package config
