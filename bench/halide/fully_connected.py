"""fully_connected in Halide (see benchmarks/fully_connected.hk): a quantized (TFLite uint8)
layer, w is (o, k), i32 accumulation with zero points and bias, Q31 requantization."""
import halide as hl
from common import build, options, requantize_u8, i32

opts = options()
inp = hl.ImageParam(hl.UInt(8), 1, "in")
w = hl.ImageParam(hl.UInt(8), 2, "w")
bias = hl.ImageParam(hl.Int(32), 1, "bias")
n = hl.Param(hl.Int(32), "n")
in_zp = hl.Param(hl.UInt(8), "in_zp")
w_zp = hl.Param(hl.UInt(8), "w_zp")
mul = hl.Param(hl.Int(32), "mul")
out_zp = hl.Param(hl.UInt(8), "out_zp")
o = hl.Var("o")
k = hl.RDom([(0, n)], "k")
acc = hl.Func("acc")
acc[o] = bias[o]
acc[o] += (i32(inp[k.x]) - i32(in_zp)) * (i32(w[o, k.x]) - i32(w_zp))
out = hl.Func("out")
out[o] = requantize_u8(acc[o], mul, 8, out_zp)
oo, oi = hl.Var("oo"), hl.Var("oi")
out.split(o, oo, oi, opts.lanes).vectorize(oi)
acc.compute_at(out, oo).vectorize(o)
acc.update().vectorize(o)
build(out, [inp, w, bias, n, in_zp, w_zp, mul, out_zp], opts, oi)
