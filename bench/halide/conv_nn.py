"""conv_nn in Halide (see benchmarks/conv_nn.hk): a quantized (TFLite uint8) 3x3
convolution layer over (ci, x, y) with filter (co, ci, tap), Q31 requantization."""
import halide as hl
from common import build, options, requantize_u8, i32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 3, "in")
filt = hl.ImageParam(hl.UInt(8), 3, "filt")
bias = hl.ImageParam(hl.Int(32), 1, "bias")
cin = hl.Param(hl.Int(32), "cin")
in_zp = hl.Param(hl.UInt(8), "in_zp")
f_zp = hl.Param(hl.UInt(8), "f_zp")
mul = hl.Param(hl.Int(32), "mul")
out_zp = hl.Param(hl.UInt(8), "out_zp")
co, x, y = hl.Var("co"), hl.Var("x"), hl.Var("y")
r = hl.RDom([(0, 3), (0, 3), (0, cin)], "r")
acc = hl.Func("acc")
acc[co, x, y] = bias[co]
acc[co, x, y] += (i32(inp[r.z, x + r.x, y + r.y]) - i32(in_zp)) * (
    i32(filt[co, r.z, 3 * r.y + r.x]) - i32(f_zp)
)
out = hl.Func("out")
out[co, x, y] = requantize_u8(acc[co, x, y], mul, 8, out_zp)
# The accumulator is computed per vector of output channels, vectorized like the output.
coo, coi = hl.Var("coo"), hl.Var("coi")
out.split(co, coo, coi, opts.lanes).vectorize(coi)
acc.compute_at(out, coo).vectorize(co)
acc.update().vectorize(co)
build(
    out,
    [inp, filt, bias, cin, in_zp, f_zp, mul, out_zp],
    opts,
    coi,
    caveats={
        "hexagon": """Halide treats 32-bit signed overflow as undefined and accumulates
        with saturating adds (vadd(...):sat, vmpy(v.h, r.h):sat) on HVX, so where the
        random full-range bias plus the sum overflows (harrow's i32 wraps, as the kernel
        says) it differs"""
    },
)
