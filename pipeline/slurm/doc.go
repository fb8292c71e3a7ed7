// Package slurm runs pipeline tasks on a Slurm cluster: the executor
// behind `thv repro --executor slurm`.
//
// The executor batches the specs the scheduler hands it and submits them as
// job arrays (sbatch --parsable --array=0-N%M --time=…): each array element
// runs `<thv> exec-task --store <store> <its spec file>` on a node, where the
// worker checks the code identity, reads its inputs from the project store
// (on a filesystem the nodes share) and writes its outputs and index entry
// there, atomically. The element's result lines, renamed into place when the
// worker exits, resolve the Execute calls of its tasks; a poller follows the
// run's own jobs with squeue every PollInterval (never sbatch --wait, whose
// polls grow to 32 s). The DAG goes on as elements finish: there is no
// barrier per stage.
//
// Everything a run writes outside the store's objects and index lives in
// <store>/slurm/<run>/: jobs.jsonl (the submitted job IDs and the keys of
// their tasks), one directory per array (script, spec, result, stdout and
// stderr files per element) and owner.lock, flock'ed while the run lives.
// The directory is made at the first Execute, so a repro with nothing to
// run writes nothing. A later run that can take an earlier run's lock
// knows that run is dead and cancels its leftover jobs (by job name, so a
// recycled job ID is never touched); their completed tasks are already in
// the store, and the scheduler does not even call Execute for them.
//
// The package knows nothing of the paper: it sees pipeline.Spec values and
// runs the binary it is given.
package slurm
