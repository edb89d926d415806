#!/bin/sh
# Build the fuzz targets with nightly and libFuzzer's coverage instrumentation (what cargo-fuzz
# does, without needing it installed) and run each for SECONDS seconds, seeded from the fixtures.
#
#     fuzz/run.sh [SECONDS] [TARGET...]        (default: 60 seconds, every target)
#
# A crash (a panic, an "internal error", a malformed model, an abort), a run over 10 s or over
# 1 GB fails the script; libFuzzer writes the input to fuzz/artifacts/TARGET/. Turn one into a
# regression fixture under tests/fixtures/bad/ (see its README). Overflow checks are on: an
# arithmetic overflow on hostile numbers is a finding too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-archive program_json structured optimizer}
export CARGO_TARGET_DIR="$here/target"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps the instrumentation out of build scripts and proc-macros.
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
cargo +nightly build --quiet --release --manifest-path "$here/Cargo.toml" --bins --target "$triple"
bin="$CARGO_TARGET_DIR/$triple/release"
for t in $targets; do
    corpus="$here/corpus/$t"
    mkdir -p "$corpus" "$here/artifacts/$t"
    # Seeds: the fixtures themselves (archive), their program JSON (program_json, after a
    # selector byte), nothing for structured and optimizer (any bytes make a plan or a graph).
    case $t in
        # The fixtures under 100 KB: larger ones slow every run and grow the corpus fast.
        archive) find "$here/../tests/fixtures" -maxdepth 1 -name '*.pt2' -size -100k -exec cp -n {} "$corpus/" \; ;;
        program_json)
            python3 - "$here/../tests/fixtures" "$corpus" <<'PY'
import sys, zipfile, pathlib
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
names = ["mlp_bn", "convnet", "tiny_transformer", "cond", "nn_ops", "hops_loops", "windows_norms", "more_ops"]
for i, n in enumerate(names):
    z = zipfile.ZipFile(src / f"{n}.pt2")
    j = next(e for e in z.namelist() if e.endswith("models/model.json"))
    (out / f"{n}.json").write_bytes(bytes([i]) + z.read(j))
PY
            ;;
    esac
    # A structured input is a plan of edits, an optimizer input a graph's choices: long ones from
    # the start, not grown byte by byte.
    case $t in
        structured|optimizer) len="-max_len=4096 -len_control=0" ;;
        *) len="-max_len=131072" ;;
    esac
    echo "fuzz: $t for ${seconds}s" >&2
    "$bin/$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 $len \
        -artifact_prefix="$here/artifacts/$t/" -print_final_stats=1 2>"$here/artifacts/$t.log" || {
        tail -40 "$here/artifacts/$t.log" >&2
        echo "fuzz: $t found a crash (input in fuzz/artifacts/$t/)" >&2
        exit 1
    }
    grep -E "stat::number_of_executed_units|cov:" "$here/artifacts/$t.log" | tail -2 >&2
done
