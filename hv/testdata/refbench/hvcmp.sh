#!/bin/bash
# hvcmp.sh: the whole-command time of bin/hv against moocore's hv command on
# the 24 sets of TestWriteFronts, side by side and in both orders, after
# checking that both print the same volume (to a relative 1e-12; moocore
# prints 15 significant digits).
#
#   git clone https://github.com/multi-objective/moocore && make -C moocore/c hv DEBUG=0
#   go test ./hv -run TestWriteFronts -fronts /tmp/fronts
#   make build && hv/testdata/refbench/hvcmp.sh moocore/bin/hv /tmp/fronts
#
# Prints per set the mean of each command in each order and the ratios
# (bin/hv over moocore) of the means and of the minima. Needs hyperfine.
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 MOOCORE_HV FRONTS_DIR (see the header of this script)" >&2
	exit 2
fi
moocore=$1 dir=$2 hv=${HV:-bin/hv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-18s %17s %17s %6s %6s\n' set "bin/hv ms" "moocore ms" mean min
for f in "$dir"/*.txt; do
	name=$(basename "$f" .txt)
	d=$(head -1 "$f" | wc -w)
	ref=$(printf '0 %.0s' $(seq "$d"))
	ours=$("$hv" "$f")
	theirs=$("$moocore" -r "$ref" "$dir/neg/$name.txt" | tr -d ' \t')
	if ! awk -v a="$ours" -v b="$theirs" 'BEGIN { e = a - b; exit !(e*e <= 1e-24 * a*a) }'; then
		echo "$name: bin/hv prints $ours, moocore $theirs" >&2
		exit 1
	fi
	runs=40
	case $name in *n5000 | *d5_n1000) runs=10 ;; esac
	a="$hv $f" b="$moocore -r '$ref' $dir/neg/$name.txt"
	hyperfine -N -w 3 -r "$runs" --export-csv "$tmp/1.csv" "$a" "$b" >/dev/null 2>&1
	hyperfine -N -w 3 -r "$runs" --export-csv "$tmp/2.csv" "$b" "$a" >/dev/null 2>&1
	# CSV: command,mean,stddev,median,user,system,min,max (seconds)
	awk -F, -v name="$name" '
		FNR == 2 { if (FILENAME ~ /1.csv$/) { om1 = $2; on1 = $7 } else { mm2 = $2; mn2 = $7 } }
		FNR == 3 { if (FILENAME ~ /1.csv$/) { mm1 = $2; mn1 = $7 } else { om2 = $2; on2 = $7 } }
		END {
			printf "%-18s %8.2f %8.2f %8.2f %8.2f %6.2f %6.2f\n", name, om1*1e3, om2*1e3, mm1*1e3, mm2*1e3,
				(om1+om2)/(mm1+mm2), (on1 < on2 ? on1 : on2)/(mn1 < mn2 ? mn1 : mn2)
		}' "$tmp/1.csv" "$tmp/2.csv"
done
