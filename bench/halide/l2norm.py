"""l2norm in Halide (see benchmarks/l2norm.hk): per column x, the sum over k of the
squared difference from a zero point."""
import halide as hl
from common import build, options, i16, i32, u32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
zp = hl.Param(hl.UInt(8), "zp")
n = hl.Param(hl.Int(32), "n")
x = hl.Var("x")
k = hl.RDom([(0, n)], "k")
d = i16(inp[x, k.x]) - i16(zp)
out = hl.Func("out")
out[x] = hl.u32(0)
out[x] += u32(i32(d) * i32(d))
out.update().vectorize(x, opts.lanes)
build(out, [inp, zp, n], opts, x)
