"""sobel3x3 in Halide (see benchmarks/sobel3x3.hk)."""
import halide as hl
from common import build, options, u8, u16

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
vsum = hl.Func("vsum")
hsum = hl.Func("hsum")
vsum[x, y] = u16(inp[x, y - 1]) + 2 * u16(inp[x, y]) + u16(inp[x, y + 1])
hsum[x, y] = u16(inp[x - 1, y]) + 2 * u16(inp[x, y]) + u16(inp[x + 1, y])
out = hl.Func("out")
sx = hl.absd(vsum[x - 1, y], vsum[x + 1, y])
sy = hl.absd(hsum[x, y - 1], hsum[x, y + 1])
out[x, y] = u8(hl.min(sx + sy, 255))
build(out, [inp], opts, x)
