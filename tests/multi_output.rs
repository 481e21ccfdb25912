//! Kernels with several outputs: computed in one loop with shared loads, every output
//! checked against the interpreter (a fault in any one of them is caught and named), and
//! the kernels the loops cannot run refused with a message naming the place.

use harrow::kernel;

fn kernel_of(text: &str) -> Result<kernel::Kernel, String> {
    kernel::parse(&harrow::diag::Source::new("t.hk", text)).map_err(|d| d.render())
}

fn yuv_to_rgb() -> kernel::Kernel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/yuv_to_rgb.hk");
    let text = std::fs::read_to_string(&path).expect("the suite's yuv_to_rgb");
    kernel::parse(&harrow::diag::Source::new(path.display().to_string(), text))
        .unwrap_or_else(|d| panic!("{}", d.render()))
}

/// The statements of the first chunk loop of the main vector loop.
fn first_chunk_loop(c: &str) -> &str {
    let start = c.find("for (int32_t hv_xo").expect("a chunk loop");
    let end = c[start..].find("\n                }").expect("its end") + start;
    &c[start..end]
}

#[test]
fn outputs_share_their_loads_and_each_is_checked() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let k = yuv_to_rgb();
    assert_eq!(k.outputs(), 3);
    let b = kernel::c_file::build(&k, &be, None);
    // One loop computes the three planes: each input row is loaded once per chunk.
    let body = first_chunk_loop(&b.c);
    for row in 0..3 {
        let loads = body.matches(&format!("b_hv_row{row} + ")).count();
        assert_eq!(loads, 1, "row {row} is loaded once:\n{body}");
    }
    for out in ["hv_out + ", "hv_out_g + ", "hv_out_b + "] {
        assert!(
            body.contains(out),
            "{out} is stored in the same loop:\n{body}"
        );
    }
    for size in [[261, 5], [7, 3], [1000, 2]] {
        let r = kernel::harness::run_c(&k, &be, &b.c, b.lanes, &size, 3).unwrap();
        assert!(r.mismatch.is_none(), "{size:?}: {:?}", r.mismatch);
    }
    // A fault in the last output only (its vector store, and its scalar code for narrow
    // rows) is caught and named.
    let faulty = b.c.replacen(
        "__builtin_memcpy(hv_out_b + ",
        "hv_out_b[0] ^= 1; __builtin_memcpy(hv_out_b + ",
        1,
    );
    assert_ne!(faulty, b.c);
    let r = kernel::harness::run_c(&k, &be, &faulty, b.lanes, &[261, 5], 3).unwrap();
    let m = r.mismatch.expect("the fault is caught");
    assert!(m.contains("at b["), "{m}");
}

#[test]
fn the_listing_shows_every_output() {
    let be = harrow::targets::backend("arm-neon").unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/yuv_to_rgb.hk");
    let ir = harrow::cli::kernel::compile(&path, &be, "ir", "f", None).unwrap();
    for part in ["; output\n", "; output `g`\n", "; output `b`\n"] {
        assert!(ir.contains(part), "{part} in:\n{ir}");
    }
}

#[test]
fn the_scalar_baseline_writes_every_output() {
    let k = yuv_to_rgb();
    let c = kernel::c_file::scalar_file(&k, "f");
    for store in [
        "out[v_x + v_y * out_s1] = ",
        "out_g[v_x + v_y * out_g_s1] = ",
        "out_b[v_x + v_y * out_b_s1] = ",
    ] {
        assert!(c.contains(store), "{store} in:\n{c}");
    }
}

#[test]
fn outputs_must_agree_and_loops_are_refused_with_the_place() {
    let e = kernel_of(
        "input a: u8[2]\noutput p(x, y): u8 = a(x, y)\noutput q(x, y): u16 = u16(a(x, y))\n",
    )
    .unwrap_err();
    assert!(
        e.contains("t.hk:3:8") && e.contains("first one's variables and type"),
        "{e}"
    );
    let e =
        kernel_of("input a: u8[2]\noutput p(x, y): u8 = a(x, y)\noutput q(y, x): u8 = a(x, y)\n")
            .unwrap_err();
    assert!(e.contains("t.hk:3:8"), "{e}");
    let e = kernel_of(
        "input a: u8[2]\nparam n: i32 = 4 in 1..8\nrdom k = 0..n\n\
         output p(x, y): u16 = sum(k, u16(a(x + k, y)))\noutput q(x, y): u16 = u16(a(x, y))\n",
    )
    .unwrap_err();
    assert!(
        e.contains("t.hk:5:") && e.contains("reduction that stays a loop"),
        "{e}"
    );
    // Unrolled reductions are fine.
    let k = kernel_of(
        "input a: u8[2]\nrdom k = 0..3\n\
         output p(x, y): u16 = sum(k, u16(a(x + k, y)))\noutput q(x, y): u16 = u16(a(x, y))\n",
    )
    .unwrap();
    assert_eq!(k.outputs(), 2);
}
