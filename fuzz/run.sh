#!/bin/sh
# Run fuzz_decode.py for SECONDS (default 3600) with one worker, restarting
# libFuzzer after each finding (its -fork mode does not work with atheris), then
# merge what it learnt with -merge=1 into WORKDIR/merged (copy that to fuzz/corpus).
#
#   fuzz/run.sh [SECONDS] [WORKDIR] [REV]
#
# The package is fuzzed from a snapshot (git REV, default HEAD; "worktree" for the
# working tree as it is now), so edits made while it runs do not change the target
# half-way.  Mutations also use the tokens in fuzz/godot.dict.  Findings land
# in fuzz/crashes/ (crash-*, timeout-*, oom-*, slow-*); the log in WORKDIR/fuzz.log.
# GF_FUZZ_TARGET=resources runs fuzz_resources.py instead (seeds fuzz/corpus_resources,
# findings fuzz/crashes_resources, no dictionary).
set -u
cd "$(dirname "$0")/.."
SECONDS_TOTAL=${1:-3600}
WORK=${2:-/tmp/gf-fuzz}
REV=${3:-HEAD}
case ${GF_FUZZ_TARGET:-decode} in
    resources) TARGET=fuzz/fuzz_resources.py SEEDS=fuzz/corpus_resources CRASHES=fuzz/crashes_resources DICT= ;;
    *) TARGET=fuzz/fuzz_decode.py SEEDS=fuzz/corpus CRASHES=fuzz/crashes DICT=-dict=fuzz/godot.dict ;;
esac
mkdir -p "$WORK/corpus" "$CRASHES"
LOG="$WORK/fuzz.log"
SNAP="$WORK/snapshot"
rm -rf "$SNAP" && mkdir -p "$SNAP"
if [ "$REV" = worktree ]; then
    cp -r godot_formats "$SNAP/"
else
    git archive "$REV" godot_formats | tar -x -C "$SNAP"
fi
export PYTHONPATH="$SNAP"
echo "=== fuzzing $(cd / && python3 -c 'import godot_formats; print(godot_formats.__file__)') ($REV, HEAD $(git rev-parse --short HEAD))" >>"$LOG"
START=$(date +%s)
RUNS=0
while :; do
    NOW=$(date +%s)
    LEFT=$((SECONDS_TOTAL - (NOW - START)))
    [ "$LEFT" -le 0 ] && break
    RUNS=$((RUNS + 1))
    echo "=== run $RUNS, $LEFT s left, $(date -u +%FT%TZ)" >>"$LOG"
    python3 $TARGET "$WORK/corpus" $SEEDS \
        -artifact_prefix=$CRASHES/ $DICT -max_len=16384 -timeout=10 -rss_limit_mb=1536 \
        -max_total_time="$LEFT" -print_final_stats=1 >>"$LOG" 2>&1
    echo "=== run $RUNS exited with $?" >>"$LOG"
    sleep 2
done
# Keep only the inputs that add coverage.
rm -rf "$WORK/merged" && mkdir -p "$WORK/merged"
python3 $TARGET -merge=1 "$WORK/merged" $SEEDS "$WORK/corpus" >>"$LOG" 2>&1
echo "=== merged into $WORK/merged: $(ls "$WORK/merged" | wc -l) inputs" >>"$LOG"
