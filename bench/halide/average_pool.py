"""average_pool in Halide (see benchmarks/average_pool.hk): 3x3 window, stride 2."""
import halide as hl
from common import build, options, u8, u16, u32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
inv = hl.Param(hl.UInt(16), "inv")
x, y = hl.Var("x"), hl.Var("y")
# Columns first: summed rows first, Halide 21's HVX backend selects a multiply-add it has
# no implementation of (`halide.hexagon.add_2mpy.vub.ub not found`); the sum is exact
# either way (nine bytes fit in 16 bits).
s = None
for rx in range(3):
    for ry in range(3):
        v = u16(inp[2 * x + rx, 2 * y + ry])
        s = v if s is None else s + v
out = hl.Func("out")
out[x, y] = u8((u32(s) * u32(inv)) >> 16)
build(out, [inp, inv], opts, x)
