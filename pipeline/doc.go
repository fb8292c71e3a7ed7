// Package pipeline turns the experiment protocol (params.yaml) into a DAG of
// content-hashed tasks and runs what is stale: configuration loading and
// validation, task keys and code fingerprints, scheduling, executors,
// status/explain and progress.
package pipeline
