package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/artifacts/remote"
	"thv/pipeline"
	"thv/protocol"
)

// remoteFlags select the remote store (artifacts/remote) and the keys of a
// run: a setting of the store, like --store, that enters no key.
type remoteFlags struct {
	url, signKey, trusted string
	jobs                  int
	packSize              byteSize // push: objects per pack (and batch); 0: the default
	require               bool
}

func (f *remoteFlags) register(cmd *cobra.Command, sign bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.url, "remote", "", "remote store: s3://bucket/prefix (the AWS environment: AWS_ENDPOINT_URL, AWS_REGION, keys, profiles) or file:///dir (default: $THV_REMOTE)")
	fl.StringVar(&f.trusted, "trusted-keys", "", "public keys (FILE.pub[,FILE.pub…]) whose signed remote entries are used (default: $THV_TRUSTED_KEYS)")
	if sign {
		fl.StringVar(&f.signKey, "sign-key", "", "private key (NAME.key) that signs the entries uploaded to the remote; without it the remote is read-only")
		fl.BoolVar(&f.require, "require-remote", false, "fail the run (after it completes) if the remote could have served a task and did not: an entry it holds was not used (an untrusted key, a bad signature, a corrupt object) or the remote stopped answering")
	}
}

// open opens the remote, or returns nil when none is configured.
func (f *remoteFlags) open(ctx context.Context, errw io.Writer) (*remote.Remote, error) {
	url := f.url
	if url == "" {
		url = os.Getenv("THV_REMOTE")
	}
	if url == "" {
		if f.signKey != "" || f.trusted != "" {
			return nil, errors.New("--sign-key and --trusted-keys need a remote: give --remote URL or set THV_REMOTE")
		}
		return nil, nil
	}
	trusted := f.trusted
	if trusted == "" {
		trusted = os.Getenv("THV_TRUSTED_KEYS")
	}
	keys, err := remote.LoadTrustedKeys(trusted)
	if err != nil {
		return nil, err
	}
	var sk *remote.PrivateKey
	if f.signKey != "" {
		if sk, err = remote.LoadPrivateKey(f.signKey); err != nil {
			return nil, err
		}
		keys = append(keys, sk.Public()) // what this run signs, it trusts
	}
	if len(keys) == 0 {
		if f.require {
			return nil, fmt.Errorf("--require-remote: remote %s has no trusted keys (--trusted-keys or THV_TRUSTED_KEYS), so no entry of it can be used", url)
		}
		fmt.Fprintf(errw, "thv: remote %s: no trusted keys (--trusted-keys or THV_TRUSTED_KEYS): no remote entry will be used\n", url)
	}
	return remote.Open(ctx, remote.Options{URL: url, SignKey: sk, Trusted: keys, Logger: logger(errw), PackSize: int(f.packSize)})
}

// pipelineRemote is rm as the scheduler's hook (nil stays nil).
func pipelineRemote(rm *remote.Remote) pipeline.Remote {
	if rm == nil {
		return nil
	}
	return rm
}

// finishRemote prints what the remote did, with one line for all the
// entries it held that were not used (counted by reason), and reports its
// upload failures; with --require-remote, also any entry not used and a
// remote that failed.
func finishRemote(rm *remote.Remote, errw io.Writer, require bool) error {
	if rm == nil {
		return nil
	}
	fmt.Fprintln(errw, rm.Summary())
	rejected := rm.Rejections()
	if len(rejected) > 0 {
		fmt.Fprintf(errw, "thv: remote %s: entries not used, their tasks computed: %s\n", rm.URL(), strings.Join(rejected, "; "))
	}
	failure := rm.Failure()
	switch {
	case errors.Is(failure, remote.ErrNoBucket):
		fmt.Fprintf(errw, "thv: %v; tasks were computed locally\n", failure)
	case failure != nil:
		fmt.Fprintf(errw, "thv: the remote stopped answering during the run; tasks were computed locally: %v\n", failure)
	}
	err := rm.Err()
	if require && (len(rejected) > 0 || failure != nil) {
		why := strings.Join(rejected, "; ")
		if failure != nil {
			why = strings.Join(append(rejected, "the remote failed: "+failure.Error()), "; ")
		}
		err = errors.Join(err, fmt.Errorf("--require-remote: remote %s could have served tasks that were computed instead (%s)", rm.URL(), why))
	}
	return err
}

func newKeyCommand() *cobra.Command {
	key := &cobra.Command{Use: "key", Short: "Manage the ed25519 keys that sign remote store entries"}
	key.AddCommand(&cobra.Command{
		Use:   "generate NAME",
		Short: "Write a new key pair NAME.key (mode 0600, secret) and NAME.pub",
		Long: `Write a new ed25519 key pair: NAME.key signs the index entries a run uploads
to the remote store (--sign-key NAME.key; keep it secret, e.g. a CI secret),
and NAME.pub is what readers trust (--trusted-keys NAME.pub). Revoke a key
by removing its .pub from the readers' trusted lists. Existing files are
never overwritten.`,
		Example: "  thv key generate ci-2026",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, p, err := remote.GenerateKey(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (secret: mode 0600) and %s (public: give it to readers as --trusted-keys)\n", k, p)
			return nil
		},
	})
	return key
}

// lockItems lists the tasks of the project's lock.
func lockItems(proj *protocol.Project) ([]remote.Item, error) {
	if len(proj.Lock.Tasks) == 0 {
		return nil, fmt.Errorf("%s records no tasks: run thv repro first (push and pull sync what a lock references)", proj.LockPath)
	}
	items := make([]remote.Item, 0, len(proj.Lock.Tasks))
	for _, r := range proj.Lock.Tasks {
		items = append(items, remote.Item{Task: r.ID, Key: r.Key, Kind: r.Kind})
	}
	return items, nil
}

func newSyncCommand(verb string) *cobra.Command {
	var pf projectFlags
	var rf remoteFlags
	short := map[string]string{
		"push": "Upload to the remote store what the lock references (signed)",
		"pull": "Download from the remote store what the lock references (trusted signatures only)",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb,
		Short: short,
		Long: short + `.
They move packs of objects and batches of signed entries, a few requests
for a whole lock (docs/ci.md): push packs the objects the remote lacks
(--pack-size of them per pack, 32MiB by default) and uploads each pack
before the batch of entries whose objects it completes, so a reader never
sees an entry without its objects; pull downloads each pack once,
re-hashes it and every object in it, and uses only entries signed by a
trusted key. Transfers run in parallel (-j), each retried with backoff;
entries already there are skipped, so a killed ` + verb + ` resumes.`,
		Example: "  thv " + verb + " --remote s3://bucket/thv --profile quick" + map[string]string{"push": " --sign-key ci.key", "pull": " --trusted-keys ci.pub"}[verb],
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return syncLock(cmd, verb, &pf, &rf) },
	}
	pf.register(cmd)
	rf.register(cmd, verb == "push")
	cmd.Flags().IntVarP(&rf.jobs, "jobs", "j", 8, "parallel transfers")
	if verb == "push" {
		cmd.Flags().Var(&rf.packSize, "pack-size", "bytes of objects per pack, and so per batch of entries, e.g. 8MiB (default 32MiB): a push that is killed keeps its batches written so far")
	}
	return cmd
}

// syncLock is thv push and thv pull: the entries of the lock's tasks, and
// their objects, to or from the remote.
func syncLock(cmd *cobra.Command, verb string, pf *projectFlags, rf *remoteFlags) error {
	proj, err := pf.open(verb == "push")
	if err != nil {
		return err
	}
	errw := cmd.ErrOrStderr()
	rm, err := rf.open(cmd.Context(), errw)
	if err != nil {
		return err
	}
	if rm == nil {
		return errors.New("no remote: give --remote URL or set THV_REMOTE")
	}
	items, err := lockItems(proj.Project)
	if err != nil {
		return err
	}
	var rep remote.SyncReport
	if verb == "push" {
		rep = rm.Push(cmd.Context(), proj.Store, items, rf.jobs, errw)
	} else {
		unlock, err := proj.Store.LockShared() // a gc must not remove what is pulled
		if err != nil {
			return err
		}
		defer unlock()
		rep = rm.Pull(cmd.Context(), proj.Store, items, rf.jobs, errw)
		if err := proj.Store.Sync(); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %d of %d entries done (%d already there), %d failed, %d bytes in %s\n",
		verb, rep.Done, rep.Total, rep.Skipped, rep.Failed, rep.Bytes, rep.Elapsed.Round(time.Millisecond))
	if r := rm.Rejections(); len(r) > 0 {
		fmt.Fprintf(errw, "thv: remote %s: entries not used: %s\n", rm.URL(), strings.Join(r, "; "))
	}
	if rep.Failed > 0 {
		for i, e := range rep.Errs {
			if i == 10 {
				fmt.Fprintf(errw, "… %d more\n", len(rep.Errs)-10)
				break
			}
			fmt.Fprintf(errw, "FAILED %v\n", e)
		}
		return fmt.Errorf("%s: %d of %d entries failed against %s; rerun to resume (what is done stays done)", verb, rep.Failed, rep.Total, rm.URL())
	}
	return nil
}

// remoteGC is thv gc --remote: what the current lock references stays.
func remoteGC(cmd *cobra.Command, pf *projectFlags, rf *remoteFlags, grace time.Duration, dry bool) error {
	proj, err := pf.open(true)
	if err != nil {
		return err
	}
	rm, err := rf.open(cmd.Context(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	keep := map[artifacts.Key]bool{}
	for _, r := range proj.Lock.Tasks {
		keep[r.Key] = true
	}
	if len(keep) == 0 {
		return fmt.Errorf("%s records no tasks: gc --remote keeps what the lock references, so it would delete every entry older than %v; run thv repro first", proj.LockPath, grace)
	}
	st, err := rm.GC(cmd.Context(), keep, grace, dry, time.Now())
	if err != nil {
		return err
	}
	report := st.String()
	if dry {
		report = "would have " + report
	}
	fmt.Fprintf(cmd.OutOrStdout(), "remote %s: %s\n", rm.URL(), report)
	return nil
}
