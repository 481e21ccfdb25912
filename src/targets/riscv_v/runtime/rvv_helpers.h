/* harrow's helpers for RISC-V Vector programs, with VLEN fixed at 128 bits
   (clang -mrvv-vector-bits=128).

   Register types. RVV intrinsics take and return sizeless types (vuint8m1_t); harrow keeps
   values in fixed-length ones, which C converts to and from clang's generic vectors of the
   same size: rv_<lanes type><LMUL>, a half register (mf2, 64 bits), a register (m1,
   128 bits) or a group of 2, 4 or 8 registers (m2, m4, m8: 256 to 1024 bits). */
#define RV_FIXED(S, V, BITS) typedef V rv_##S __attribute__((riscv_rvv_vector_bits(BITS)));
#define RV_FIXED_GROUPS(E, V)                                                           \
  RV_FIXED(E##m1, V##m1_t, 128) RV_FIXED(E##m2, V##m2_t, 256) RV_FIXED(E##m4, V##m4_t, 512) \
  RV_FIXED(E##m8, V##m8_t, 1024)
#define RV_FIXED_ALL(E, V) RV_FIXED(E##mf2, V##mf2_t, 64) RV_FIXED_GROUPS(E, V)
RV_FIXED_ALL(u8, vuint8)
RV_FIXED_ALL(i8, vint8)
RV_FIXED_ALL(u16, vuint16)
RV_FIXED_ALL(i16, vint16)
RV_FIXED_ALL(u32, vuint32)
RV_FIXED_ALL(i32, vint32)
RV_FIXED_GROUPS(u64, vuint64)
RV_FIXED_GROUPS(i64, vint64)

/* Comparisons give mask registers; harrow keeps booleans as 0/1 lanes. rv_<op>_<S>(a, b)
   is the comparison as 0/1 lanes of the unsigned type U of the same width, and
   rv_sel_<op>_<S>(a, b, x, y) (rv_selu_... for x, y of type U) selects by it with one
   vmerge, the mask never leaving its register. CMP is the mask compare (vmsltu for
   unsigned lanes), B the mask type's SEW/LMUL ratio, VL the lanes. */
#define RV_CMP(OP, CMP, S, U, B, VL)                                                     \
  static inline rv_##U rv_##OP##_##S(rv_##S a, rv_##S b) {                              \
    return __riscv_vmerge_vxm_##U(__riscv_vmv_v_x_##U(0, VL), 1,                          \
                                  __riscv_##CMP##_vv_##S##_b##B(a, b, VL), VL);          \
  }                                                                                      \
  static inline rv_##S rv_sel_##OP##_##S(rv_##S a, rv_##S b, rv_##S x, rv_##S y) {      \
    return __riscv_vmerge_vvm_##S(y, x, __riscv_##CMP##_vv_##S##_b##B(a, b, VL), VL);   \
  }                                                                                      \
  static inline rv_##U rv_selu_##OP##_##S(rv_##S a, rv_##S b, rv_##U x, rv_##U y) {     \
    return __riscv_vmerge_vvm_##U(y, x, __riscv_##CMP##_vv_##S##_b##B(a, b, VL), VL);   \
  }
#define RV_CMP_UNSIGNED(S, B, VL)                                                        \
  RV_CMP(eq, vmseq, S, S, B, VL) RV_CMP(ne, vmsne, S, S, B, VL)                          \
  RV_CMP(lt, vmsltu, S, S, B, VL) RV_CMP(le, vmsleu, S, S, B, VL)                        \
  RV_CMP(gt, vmsgtu, S, S, B, VL) RV_CMP(ge, vmsgeu, S, S, B, VL)
#define RV_CMP_SIGNED(S, U, B, VL)                                                       \
  RV_CMP(eq, vmseq, S, U, B, VL) RV_CMP(ne, vmsne, S, U, B, VL)                          \
  RV_CMP(lt, vmslt, S, U, B, VL) RV_CMP(le, vmsle, S, U, B, VL)                          \
  RV_CMP(gt, vmsgt, S, U, B, VL) RV_CMP(ge, vmsge, S, U, B, VL)
RV_CMP_UNSIGNED(u8mf2, 16, 8)
RV_CMP_SIGNED(i8mf2, u8mf2, 16, 8)
RV_CMP_UNSIGNED(u8m1, 8, 16)
RV_CMP_SIGNED(i8m1, u8m1, 8, 16)
RV_CMP_UNSIGNED(u8m2, 4, 32)
RV_CMP_SIGNED(i8m2, u8m2, 4, 32)
RV_CMP_UNSIGNED(u8m4, 2, 64)
RV_CMP_SIGNED(i8m4, u8m4, 2, 64)
RV_CMP_UNSIGNED(u8m8, 1, 128)
RV_CMP_SIGNED(i8m8, u8m8, 1, 128)
RV_CMP_UNSIGNED(u16mf2, 32, 4)
RV_CMP_SIGNED(i16mf2, u16mf2, 32, 4)
RV_CMP_UNSIGNED(u16m1, 16, 8)
RV_CMP_SIGNED(i16m1, u16m1, 16, 8)
RV_CMP_UNSIGNED(u16m2, 8, 16)
RV_CMP_SIGNED(i16m2, u16m2, 8, 16)
RV_CMP_UNSIGNED(u16m4, 4, 32)
RV_CMP_SIGNED(i16m4, u16m4, 4, 32)
RV_CMP_UNSIGNED(u16m8, 2, 64)
RV_CMP_SIGNED(i16m8, u16m8, 2, 64)
RV_CMP_UNSIGNED(u32mf2, 64, 2)
RV_CMP_SIGNED(i32mf2, u32mf2, 64, 2)
RV_CMP_UNSIGNED(u32m1, 32, 4)
RV_CMP_SIGNED(i32m1, u32m1, 32, 4)
RV_CMP_UNSIGNED(u32m2, 16, 8)
RV_CMP_SIGNED(i32m2, u32m2, 16, 8)
RV_CMP_UNSIGNED(u32m4, 8, 16)
RV_CMP_SIGNED(i32m4, u32m4, 8, 16)
RV_CMP_UNSIGNED(u32m8, 4, 32)
RV_CMP_SIGNED(i32m8, u32m8, 4, 32)
RV_CMP_UNSIGNED(u64m1, 64, 2)
RV_CMP_SIGNED(i64m1, u64m1, 64, 2)
RV_CMP_UNSIGNED(u64m2, 32, 4)
RV_CMP_SIGNED(i64m2, u64m2, 32, 4)
RV_CMP_UNSIGNED(u64m4, 16, 8)
RV_CMP_SIGNED(i64m4, u64m4, 16, 8)
RV_CMP_UNSIGNED(u64m8, 8, 16)
RV_CMP_SIGNED(i64m8, u64m8, 8, 16)

/* Halves and joins. The low half of a register is the register read at half the LMUL (no
   instruction); the high half is a slide down first. Two halves join with a slide up; two
   registers are a group of two as they are. H is the half type, VL the lanes of S. */
#define RV_HALVES(S, H, VL)                                                              \
  static inline rv_##H rv_lo_##S(rv_##S a) { return __riscv_vlmul_trunc_v_##S##_##H(a); } \
  static inline rv_##H rv_hi_##S(rv_##S a) {                                             \
    return __riscv_vlmul_trunc_v_##S##_##H(__riscv_vslidedown_vx_##S(a, VL / 2, VL));    \
  }                                                                                      \
  static inline rv_##S rv_join_##S(rv_##H a, rv_##H b) {                                 \
    return __riscv_vslideup_vx_##S(__riscv_vlmul_ext_v_##H##_##S(a),                     \
                                   __riscv_vlmul_ext_v_##H##_##S(b), VL / 2, VL);        \
  }
RV_HALVES(u8m1, u8mf2, 16)
RV_HALVES(i8m1, i8mf2, 16)
RV_HALVES(u16m1, u16mf2, 8)
RV_HALVES(i16m1, i16mf2, 8)
RV_HALVES(u32m1, u32mf2, 4)
RV_HALVES(i32m1, i32mf2, 4)

