"""max_pool in Halide (see benchmarks/max_pool.hk): 3x3 window, stride 2."""
import halide as hl
from common import build, options

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
m = None
for ry in range(3):
    for rx in range(3):
        v = inp[2 * x + rx, 2 * y + ry]
        m = v if m is None else hl.max(m, v)
out = hl.Func("out")
out[x, y] = m
build(out, [inp], opts, x)
