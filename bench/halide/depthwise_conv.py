"""depthwise_conv in Halide (see benchmarks/depthwise_conv.hk): a quantized (TFLite uint8)
3x3 depthwise layer over (c, x, y), filter (c, tap), Q31 requantization."""
import halide as hl
from common import build, options, requantize_u8, i32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 3, "in")
filt = hl.ImageParam(hl.UInt(8), 2, "filt")
bias = hl.ImageParam(hl.Int(32), 1, "bias")
in_zp = hl.Param(hl.UInt(8), "in_zp")
f_zp = hl.Param(hl.UInt(8), "f_zp")
mul = hl.Param(hl.Int(32), "mul")
out_zp = hl.Param(hl.UInt(8), "out_zp")
c, x, y = hl.Var("c"), hl.Var("x"), hl.Var("y")
acc = bias[c]
for ry in range(3):
    for rx in range(3):
        acc = acc + (i32(inp[c, x + rx, y + ry]) - i32(in_zp)) * (
            i32(filt[c, 3 * ry + rx]) - i32(f_zp)
        )
out = hl.Func("out")
out[c, x, y] = requantize_u8(acc, mul, 6, out_zp)
build(out, [inp, filt, bias, in_zp, f_zp, mul, out_zp], opts, c)
