"""median3x3 in Halide (see benchmarks/median3x3.hk)."""
import halide as hl
from common import build, options

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")


def med3(a, b, c):
    return hl.max(hl.min(hl.max(a, b), c), hl.min(a, b))


hi = hl.Func("hi")
lo = hl.Func("lo")
md = hl.Func("md")
hi[x, y] = hl.max(hl.max(inp[x, y - 1], inp[x, y]), inp[x, y + 1])
lo[x, y] = hl.min(hl.min(inp[x, y - 1], inp[x, y]), inp[x, y + 1])
md[x, y] = med3(inp[x, y - 1], inp[x, y], inp[x, y + 1])
minhi = hl.min(hl.min(hi[x - 1, y], hi[x, y]), hi[x + 1, y])
maxlo = hl.max(hl.max(lo[x - 1, y], lo[x, y]), lo[x + 1, y])
medmd = med3(md[x - 1, y], md[x, y], md[x + 1, y])
out = hl.Func("out")
out[x, y] = med3(minhi, medmd, maxlo)
build(out, [inp], opts, x)
