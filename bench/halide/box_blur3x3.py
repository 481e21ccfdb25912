"""box_blur3x3 in Halide (see benchmarks/box_blur3x3.hk)."""
import halide as hl
from common import build, options

opts = options()
inp = hl.ImageParam(hl.UInt(16), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
bx = hl.Func("bx")
bx[x, y] = (inp[x - 1, y] + inp[x, y] + inp[x + 1, y]) / 3
out = hl.Func("out")
out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
build(out, [inp], opts, x)
