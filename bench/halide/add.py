"""add (quantized) in Halide (see benchmarks/add.hk)."""
import halide as hl
from common import build, options, i16

opts = options()
a = hl.ImageParam(hl.UInt(8), 1, "a")
b = hl.ImageParam(hl.UInt(8), 1, "b")
a_zp = hl.Param(hl.UInt(8), "a_zp")
b_zp = hl.Param(hl.UInt(8), "b_zp")
a_mul = hl.Param(hl.Int(16), "a_mul")
b_mul = hl.Param(hl.Int(16), "b_mul")
out_zp = hl.Param(hl.UInt(8), "out_zp")
x = hl.Var("x")
da = (i16(a[x]) - i16(a_zp)) << 6
db = (i16(b[x]) - i16(b_zp)) << 6
s = hl.saturating_add(hl.rounding_mul_shift_right(da, a_mul, 15),
                      hl.rounding_mul_shift_right(db, b_mul, 15))
out = hl.Func("out")
out[x] = hl.saturating_cast(hl.UInt(8), hl.saturating_add(hl.rounding_shift_right(s, 6), i16(out_zp)))
build(out, [a, b, a_zp, b_zp, a_mul, b_mul, out_zp], opts, x)
