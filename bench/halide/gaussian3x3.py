"""gaussian3x3 in Halide (see benchmarks/gaussian3x3.hk)."""
import halide as hl
from common import build, options, u8, i16

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
row = hl.Func("row")
row[x, y] = i16(inp[x - 1, y]) + 2 * i16(inp[x, y]) + i16(inp[x + 1, y])
out = hl.Func("out")
out[x, y] = u8((row[x, y - 1] + 2 * row[x, y] + row[x, y + 1] + 8) >> 4)
build(out, [inp], opts, x)
