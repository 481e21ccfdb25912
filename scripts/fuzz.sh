#!/usr/bin/env bash
# Coverage-guided fuzzing of harrow's front ends with cargo-fuzz (libFuzzer), on stable Rust
# (`--sanitizer none`: harrow is safe Rust, so the fuzzers look for panics, aborts, stack
# overflows, runaway allocation and hangs, not memory errors).
#
#   scripts/fuzz.sh TARGET [SECONDS]     one target (default 600 s)
#   scripts/fuzz.sh all [SECONDS]        every target in turn
#
# Targets: halide_expr expr_file rake_spec opcheck rules isa kernel float_c (see src/frontends.rs).
# Needs `cargo install cargo-fuzz`. The corpus grows in fuzz/corpus/TARGET (not committed),
# seeded from the repository's own inputs and, when ../shared is beside the repository, the
# Rake specs and simd_op_check files; a crashing input is written to fuzz/artifacts/TARGET.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:-}"
seconds="${2:-600}"
all=(halide_expr expr_file rake_spec opcheck rules isa kernel float_c)

if [ -z "$target" ]; then
    echo "usage: scripts/fuzz.sh TARGET|all [SECONDS]; targets: ${all[*]}" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is not installed: run \`cargo install cargo-fuzz\`" >&2
    exit 1
fi
shared="${HARROW_SHARED:-$here/../shared}"

# seed TARGET: copies the repository's inputs of that kind into the target's corpus.
seed() {
    local dir="$here/fuzz/corpus/$1"
    mkdir -p "$dir"
    local files=()
    case "$1" in
        halide_expr)
            # One expression per file: the expression lines of the expression files.
            local n=0
            grep -hv '^\s*\(#\|input\|$\)' "$here"/tests/golden/lift/*.hl | while IFS= read -r line; do
                n=$((n + 1))
                printf '%s' "$line" > "$dir/seed-$n"
            done
            ;;
        expr_file) files=("$here"/tests/golden/lift/*.hl "$here"/tests/data/demo.hl) ;;
        rake_spec)
            files=("$here"/tests/data/frontend_seeds/spec.sexp)
            if [ -d "$shared/corpus" ]; then
                mapfile -t more < <(find "$shared/corpus" -name '*.sexp' | sort | awk 'NR % 20 == 1')
                files+=("${more[@]}")
            fi
            ;;
        opcheck)
            files=("$here"/tests/data/frontend_seeds/opcheck.txt)
            if [ -d "$shared/peer/halide-simd-op-check" ]; then
                files+=("$shared"/peer/halide-simd-op-check/*.txt)
            fi
            ;;
        rules) files=("$here"/rules/lift.rules "$here"/src/targets/x86/lower.rules "$here"/tests/data/wrong.rules) ;;
        isa) files=("$here"/src/targets/x86/isa/*.isa) ;;
        kernel) files=("$here"/benchmarks/*.hk) ;;
        float_c) files=("$here"/benchmarks/float/*.c) ;;
        *)
            echo "unknown fuzz target \`$1\`; expected one of: ${all[*]}" >&2
            exit 2
            ;;
    esac
    local f
    for f in "${files[@]}"; do
        cp "$f" "$dir/seed-$(basename "$f")"
    done
}

run() {
    seed "$1"
    echo "== fuzzing $1 for $seconds s"
    (cd "$here/fuzz" && cargo fuzz run "$1" --sanitizer none -O -- \
        -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -max_len=8192 \
        -print_final_stats=1)
}

if [ "$target" = all ]; then
    # Every target runs even when one finds a crash; the exit code says whether any did.
    failed=()
    for t in "${all[@]}"; do run "$t" || failed+=("$t"); done
    if [ ${#failed[@]} -gt 0 ]; then
        echo "fuzz: crashes found in: ${failed[*]} (inputs under fuzz/artifacts/)" >&2
        exit 1
    fi
else
    run "$target"
fi
