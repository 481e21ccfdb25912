"""mul in Halide (see benchmarks/mul.hk): a quantized (TFLite uint8) elementwise product,
requantized with a Q31 multiplier and a rounding shift."""
import halide as hl
from common import build, options, requantize_u8, i16, i32

opts = options()
a = hl.ImageParam(hl.UInt(8), 1, "a")
b = hl.ImageParam(hl.UInt(8), 1, "b")
a_zp = hl.Param(hl.UInt(8), "a_zp")
b_zp = hl.Param(hl.UInt(8), "b_zp")
mul = hl.Param(hl.Int(32), "mul")
shift = hl.Param(hl.UInt(8), "shift")
out_zp = hl.Param(hl.UInt(8), "out_zp")
x = hl.Var("x")
p = i32(i16(a[x]) - i16(a_zp)) * i32(i16(b[x]) - i16(b_zp))
out = hl.Func("out")
out[x] = requantize_u8(p, mul, i32(shift), out_zp)
build(out, [a, b, a_zp, b_zp, mul, shift, out_zp], opts, x)
