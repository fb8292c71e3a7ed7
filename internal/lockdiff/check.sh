#!/bin/sh
# check.sh OLD_THV NEW_THV WORKDIR [CASE...]
#
# Checks that two thv binaries give the same outputs, task by task: each
# binary reproduces each case in its own directory under WORKDIR (old/CASE,
# new/CASE), and lockdiff compares the two locks. A case already run by a
# binary is run again by it (its store keeps what it did: only tasks whose
# key changed execute), so checking one step after another costs only
# what each step changed. Cases (default: all three):
#
#   quick    thv repro --profile quick       (thv.quick.lock)
#   paper    thv repro                       (thv.lock, the paper's protocol)
#   reading  thv readings --only default on instance seed 7
#            (results/readings/default/instance-seed=7.lock)
#
# Keys may differ (the code changed); the exit status is lockdiff's: 0 when
# every task has the same outputs in both.
set -eu
[ $# -ge 3 ] || { echo "usage: check.sh OLD_THV NEW_THV WORKDIR [quick|paper|reading]..." >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") work=$3
shift 3
[ $# -gt 0 ] || set -- quick paper reading
here=$(dirname "$(realpath "$0")")
diff=$work/lockdiff
(cd "$here" && go build -o "$diff" .)
jobs=${JOBS:-2}
status=0
for case in "$@"; do
	for side in old new; do
		bin=$old
		[ $side = new ] && bin=$new
		dir=$work/$side/$case
		mkdir -p "$dir"
		case $case in
		quick) (cd "$dir" && "$bin" repro --profile quick -j "$jobs" >log.txt 2>&1) ;;
		paper) (cd "$dir" && "$bin" repro -j "$jobs" >log.txt 2>&1) ;;
		reading) (cd "$dir" && "$bin" readings --only default --set 'readings.instance_seeds=[7]' -j "$jobs" >log.txt 2>&1) ;;
		*) echo "check.sh: unknown case $case (quick, paper, reading)" >&2; exit 2 ;;
		esac
		tail -n 1 "$dir/log.txt"
	done
	case $case in
	quick) lock=thv.quick.lock ;;
	paper) lock=thv.lock ;;
	reading) lock=results/readings/default/instance-seed=7.lock ;;
	esac
	"$diff" "$work/old/$case/$lock" "$work/new/$case/$lock" || status=1
done
exit $status
