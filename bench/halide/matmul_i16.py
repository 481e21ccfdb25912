"""matmul_i16 in Halide (see benchmarks/matmul_i16.hk): a is (k, y), b is (x, k)."""
import halide as hl
from common import build, options, i32

opts = options()
a = hl.ImageParam(hl.Int(16), 2, "a")
b = hl.ImageParam(hl.Int(16), 2, "b")
n = hl.Param(hl.Int(32), "n")
x, y = hl.Var("x"), hl.Var("y")
k = hl.RDom([(0, n)], "k")
c = hl.Func("c")
c[x, y] = hl.i32(0)
c[x, y] += i32(a[k.x, y]) * i32(b[x, k.x])
c.update().vectorize(x, opts.lanes)
build(
    c,
    [a, b, n],
    opts,
    x,
    caveats={
        "hexagon": """Halide treats 32-bit signed overflow as undefined and accumulates
        with the saturating vmpy(v.h, r.h):sat on HVX, so where a sum of the random
        16-bit products overflows (harrow's i32 wraps, as the kernel says) it differs"""
    },
)
