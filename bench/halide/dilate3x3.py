"""dilate3x3 in Halide (see benchmarks/dilate3x3.hk)."""
import halide as hl
from common import build, options

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
out = hl.Func("out")
m = None
for dy in (-1, 0, 1):
    for dx in (-1, 0, 1):
        v = inp[x + dx, y + dy]
        m = v if m is None else hl.max(m, v)
out[x, y] = m
build(out, [inp], opts, x)
