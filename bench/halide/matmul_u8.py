"""matmul_u8 in Halide (see benchmarks/matmul_u8.hk): a is (k, y), b is (x, k)."""
import halide as hl
from common import build, options, u32

opts = options()
a = hl.ImageParam(hl.UInt(8), 2, "a")
b = hl.ImageParam(hl.UInt(8), 2, "b")
n = hl.Param(hl.Int(32), "n")
x, y = hl.Var("x"), hl.Var("y")
k = hl.RDom([(0, n)], "k")
c = hl.Func("c")
c[x, y] = hl.u32(0)
c[x, y] += u32(a[k.x, y]) * u32(b[x, k.x])
c.update().vectorize(x, opts.lanes)
build(
    c,
    [a, b, n],
    opts,
    x,
    caveats={
        "hexagon": """Halide 21 vectorizes it on HVX but, for each k, widens and multiplies
        one row (vunpack, vmpy, vshuffe, vunpack, vadd) and loads and stores the
        accumulator through memory; harrow sums four k per vrmpy in registers"""
    },
)
