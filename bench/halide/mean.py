"""mean in Halide (see benchmarks/mean.hk): per channel c, the sum of a w x h window
scaled by a Q32 reciprocal."""
import halide as hl
from common import build, options, u8, u32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 3, "in")
w = hl.Param(hl.Int(32), "w")
h = hl.Param(hl.Int(32), "h")
inv = hl.Param(hl.UInt(32), "inv")
c = hl.Var("c")
r = hl.RDom([(0, w), (0, h)], "r")
s = hl.Func("s")
s[c] = hl.u32(0)
s[c] += u32(inp[c, r.x, r.y])
out = hl.Func("out")
# Halide 21's HVX backend cannot compile this (no 64-bit vectors: "Cannot interleave
# native vectors of type uint64x64"; the same value as mul_shift_right(s, inv, 32) fails
# with "Unsupported HVX type: int64"), so HVX has no Halide figure for it.
out[c] = u8((hl.cast(hl.UInt(64), s[c]) * hl.cast(hl.UInt(64), inv)) >> 32)
# The sum is computed per vector of channels, vectorized like the output.
co, ci = hl.Var("co"), hl.Var("ci")
out.split(c, co, ci, opts.lanes).vectorize(ci)
s.compute_at(out, co).vectorize(c)
s.update().vectorize(c)
build(out, [inp, w, h, inv], opts, ci)
