"""gaussian5x5 in Halide (see benchmarks/gaussian5x5.hk)."""
import halide as hl
from common import build, options, u8, u16

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
row = hl.Func("row")
row[x, y] = (u16(inp[x - 2, y]) + 4 * u16(inp[x - 1, y]) + 6 * u16(inp[x, y])
             + 4 * u16(inp[x + 1, y]) + u16(inp[x + 2, y]))
out = hl.Func("out")
out[x, y] = u8((row[x, y - 2] + 4 * row[x, y - 1] + 6 * row[x, y] + 4 * row[x, y + 1]
                + row[x, y + 2]) >> 8)
build(out, [inp], opts, x)
