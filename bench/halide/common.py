"""Shared helpers of the Halide 21 baselines for `harrow bench --vs halide`.

Each script writes one benchmark kernel with Halide's Python API, schedules it the way
harrow compiles it (everything inlined into the output, the innermost dimension vectorized
at harrow's width, no parallelism) and compiles it ahead of time to an object file and a
header. The function's arguments are the kernel's inputs and parameters in the order of its
`.hk` file, then the output buffer.
"""

import argparse
import os

import halide as hl


def options():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True, help="Halide target string")
    p.add_argument("--name", default="halide_kernel")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--lanes", type=int, default=16, help="vector width")
    return p.parse_args()


def u8(e):
    return hl.cast(hl.UInt(8), e)


def u16(e):
    return hl.cast(hl.UInt(16), e)


def i16(e):
    return hl.cast(hl.Int(16), e)


def i32(e):
    return hl.cast(hl.Int(32), e)


def u32(e):
    return hl.cast(hl.UInt(32), e)


def requantize_u8(acc, mul, shift, out_zp):
    """TFLite's uint8 requantization of an i32 accumulator: a Q31 multiplier, a rounding
    shift and the output zero point, saturated to u8 (the kernels' formula)."""
    scaled = hl.rounding_mul_shift_right(acc, mul, hl.u32(31))
    return hl.saturating_cast(
        hl.UInt(8), hl.saturating_add(hl.rounding_shift_right(scaled, shift), i32(out_zp))
    )


def build(out, arguments, opts, vectorize_var, caveats=None):
    """Vectorizes `out` along `vectorize_var` and compiles it.

    `caveats` maps a Halide target prefix (`hexagon`) to why Halide's figure for this
    kernel on that target is not representative of Halide (found by reading its
    assembly); `harrow bench` prints it as a note and leaves the row out of its second
    geometric mean.
    """
    for prefix, text in (caveats or {}).items():
        if opts.target.startswith(prefix):
            print("harrow-caveat: " + " ".join(text.split()))
    out.vectorize(vectorize_var, opts.lanes)
    base = os.path.join(opts.out, opts.name)
    out.compile_to(
        {
            hl.OutputFileType.object: base + ".o",
            hl.OutputFileType.c_header: base + ".h",
        },
        arguments,
        opts.name,
        hl.Target(opts.target),
    )
