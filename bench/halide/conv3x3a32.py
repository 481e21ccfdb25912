"""conv3x3a32 in Halide (see benchmarks/conv3x3a32.hk)."""
import halide as hl
from common import build, options, u8, i32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 2, "in")
mask = hl.ImageParam(hl.Int(8), 2, "mask")
x, y = hl.Var("x"), hl.Var("y")
s = None
for ry in range(3):
    for rx in range(3):
        t = i32(inp[x + rx - 1, y + ry - 1]) * i32(mask[rx, ry])
        s = t if s is None else s + t
out = hl.Func("out")
out[x, y] = u8(hl.clamp(s >> 4, 0, 255))
build(
    out,
    [inp, mask],
    opts,
    x,
    caveats={
        "hexagon": """Halide 21 scalarizes it on HVX: the 32-bit products of bytes by the
        mask's scalars are computed a lane at a time in scalar registers and inserted into
        vectors (hundreds of vinsert and valign #4 per vector in its assembly)"""
    },
)
