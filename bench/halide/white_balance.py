"""white_balance in Halide (see benchmarks/white_balance.hk): a per-channel Q8 gain."""
import halide as hl
from common import build, options, u8, u32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 3, "in")
gain_r = hl.Param(hl.UInt(16), "gain_r")
gain_g = hl.Param(hl.UInt(16), "gain_g")
gain_b = hl.Param(hl.UInt(16), "gain_b")
x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
gain = hl.select(c == 0, gain_r, hl.select(c == 1, gain_g, gain_b))
out = hl.Func("out")
out[x, y, c] = u8(hl.min((u32(inp[x, y, c]) * u32(gain) + 128) >> 8, 255))
build(out, [inp, gain_r, gain_g, gain_b], opts, x)
