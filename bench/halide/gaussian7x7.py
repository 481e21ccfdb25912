"""gaussian7x7 in Halide (see benchmarks/gaussian7x7.hk)."""
import halide as hl
from common import build, options, i32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
x, y = hl.Var("x"), hl.Var("y")
w = [1, 6, 15, 20, 15, 6, 1]
row = hl.Func("row")
row[x, y] = sum(w[i] * i32(inp[x + i - 3, y]) for i in range(7))
out = hl.Func("out")
out[x, y] = hl.saturating_cast(hl.UInt(8), sum(w[i] * row[x, y + i - 3] for i in range(7)) >> 12)
build(
    out,
    [inp],
    opts,
    x,
    caveats={
        "hexagon": """Halide 21 scalarizes it on HVX: the 32-bit weighted row sums are
        computed a lane at a time in scalar registers and inserted into vectors (over a
        thousand vinsert and valign #4 in its assembly)"""
    },
)
