#!/usr/bin/env bash
# Fuzz the compiled core under ASan + UBSan:  fuzz/run_compiled.sh SECONDS WORKDIR
# Replay findings (or any inputs):             fuzz/run_compiled.sh replay WORKDIR FILE...
# Random mutation, no libFuzzer:               fuzz/run_compiled.sh mutate WORKDIR SECONDS DIR...
# Keep what a run learnt (C coverage):         fuzz/run_compiled.sh merge WORKDIR
#
# Builds a copy of the package in WORKDIR/pkg with _cdecode/_cencode/_cfront/_cfastlz compiled with clang's
# -fsanitize=fuzzer-no-link,address,undefined (or gcc's -fsanitize=address,undefined without
# C coverage; any report aborts), then runs fuzz/fuzz_compiled.py from fuzz/corpus,
# fuzz/corpus-compiled and fuzz/corpus-fastlz, new inputs to WORKDIR/corpus, findings to
# WORKDIR/findings/ (GF_FUZZ_PART=codec or fastlz: only that part of the target).  merge
# minimises fuzz/corpus-compiled and WORKDIR/corpus by the C coverage into
# fuzz/corpus-compiled.  Needs atheris (pip install atheris).  See fuzz/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mode=fuzz
if [ "${1:-}" = replay ] || [ "${1:-}" = mutate ] || [ "${1:-}" = merge ]; then mode=$1; shift; fi
if [ "$mode" = fuzz ]; then seconds=$1; work=$2; else work=$1; shift; fi
mkdir -p "$work/pkg" "$work/corpus" "$work/findings" "$here/corpus-compiled" "$here/corpus-fastlz"
work=$(cd "$work" && pwd)  # absolute: mutate runs from inside it, and PYTHONPATH names it
rm -rf "$work/pkg/godot_formats"
cp -r "$root/godot_formats" "$work/pkg/"
rm -f "$work/pkg/godot_formats/core"/*.so
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
flags="-fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1 -std=c99 -Wall"
rt=$(clang -print-resource-dir 2>/dev/null || true)/lib/linux  # no clang: empty, and gcc below
if [ -f "$rt/libclang_rt.fuzzer_no_main-x86_64.a" ] && [ -f "$rt/libclang_rt.asan-x86_64.a" ]; then
  # clang: the extensions carry libFuzzer's coverage counters (fuzzer-no-link), and one preloaded
  # runtime holds ASan (with UBSan's handlers) and libFuzzer, so the counters register with the
  # fuzzer atheris drives.  ASan's preinit object is dropped: a preloaded library initialises itself.
  cc=clang
  flags="-fsanitize=fuzzer-no-link,address,undefined $flags"
  cp "$rt/libclang_rt.asan-x86_64.a" "$work/asan.a"
  ar d "$work/asan.a" asan_preinit.cpp.o
  clang++ -shared -o "$work/asan_with_fuzzer.so" -Wl,--whole-archive "$rt/libclang_rt.fuzzer_no_main-x86_64.a" \
    "$work/asan.a" -Wl,--no-whole-archive -lpthread -ldl
  preload="$work/asan_with_fuzzer.so"
else
  # gcc: sanitizers without coverage of the C code (atheris then sees only the Python side).
  cc=gcc
  flags="-fsanitize=address,undefined $flags"
  preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
fi
echo "run_compiled.sh: extensions built with $cc" >&2
for m in _cdecode _cencode _cfront _cfastlz; do
  $cc $flags -shared -fPIC $(python3-config --includes) "$root/godot_formats/core/$m.c" -o "$work/pkg/godot_formats/core/$m$suffix"
done
export LD_PRELOAD="$preload"  # only now: the compilers above must not run under ASan
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export PYTHONMALLOC=malloc PYTHONPATH="$work/pkg"
if [ "$mode" = replay ]; then
  exec python3 "$here/fuzz_compiled.py" "$@"
fi
if [ "$mode" = merge ]; then
  rm -rf "$work/merged" && mkdir -p "$work/merged"
  python3 "$here/fuzz_compiled.py" -merge=1 "$work/merged" "$here/corpus-compiled" "$work/corpus" 2>&1 | tail -3
  rm -rf "$here/corpus-compiled" && cp -r "$work/merged" "$here/corpus-compiled"
  echo "run_compiled.sh: fuzz/corpus-compiled holds $(ls "$here/corpus-compiled" | wc -l) inputs" >&2
  exit 0
fi
if [ "$mode" = mutate ]; then
  args=("$1"); shift  # SECONDS, then the folders, made absolute before the cd
  for dir in "$@"; do args+=("$(cd "$dir" && pwd)"); done
  cd "$work/findings"
  exec python3 "$here/fuzz_compiled.py" --mutate "${args[@]}"
fi
python3 "$here/fuzz_compiled.py" "$work/corpus" "$here/corpus" "$here/corpus-compiled" "$here/corpus-fastlz" \
  -artifact_prefix="$work/findings/" \
  -dict="$here/godot.dict" -max_len="${GF_FUZZ_MAX_LEN:-16384}" -timeout=30 -rss_limit_mb=4096 -max_total_time="$seconds" \
  -print_final_stats=1 2>&1 | tee -a "$work/fuzz.log"
