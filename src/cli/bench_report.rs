//! `harrow bench`'s report: typed figures, printed as a table, serialized as JSON (serde),
//! or drawn as an SVG chart (plotters).
//!
//! The JSON schema is the [`BenchReport`] struct (documented field by field, and in
//! docs/kernels.md); readers can deserialize it with the same struct.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::kernel::harness::{self, BenchResult, LoopStats, Metric};

/// What one `harrow bench` run measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    /// The target name.
    pub target: String,
    /// `time` (timed natively) or `executed` (instructions or packets counted under qemu).
    pub metric: String,
    /// The unit of the per-element figures.
    pub unit: String,
    /// The optimisation level harrow's C is built at.
    pub opt_level: String,
    /// The optimisation level of the scalar baseline.
    pub baseline_opt_level: String,
    /// One entry per kernel that was measured.
    pub kernels: Vec<KernelFigures>,
    /// Geometric mean of the speedups over clang (absent when nothing was measured).
    pub geomean_speedup_vs_clang: Option<f64>,
    /// Geometric mean of the speedups over Halide 21, over the kernels it was measured on.
    pub geomean_speedup_vs_halide: Option<f64>,
    /// How many kernels have a Halide 21 figure.
    pub halide_kernels: usize,
    /// The same geometric mean without the kernels whose Halide figure carries a caveat
    /// (`halide_caveat`: Halide's code for them is not representative of Halide).
    pub geomean_speedup_vs_halide_without_caveats: Option<f64>,
    /// How many kernels that second mean covers.
    pub halide_kernels_without_caveats: usize,
    /// Why Halide 21 could not be used at all (`--vs halide` on a machine without it).
    pub halide_unavailable: Option<String>,
    /// Time to build the target's backend tables, milliseconds.
    pub backend_ms: f64,
    /// Kernels that failed (wrong results, build or run failures), one line each.
    pub failures: Vec<String>,
}

/// The figures of one kernel.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KernelFigures {
    /// Kernel name.
    pub name: String,
    /// Output extents measured.
    pub extents: Vec<i64>,
    /// Lanes per vector.
    pub lanes: u32,
    /// harrow's code, per output element, in `unit`.
    pub harrow: f64,
    /// The scalar C baseline built by clang, per output element.
    pub clang: f64,
    /// Halide 21's code per output element, when it was built and agreed.
    pub halide: Option<f64>,
    /// `clang / harrow`: above 1 means harrow is faster.
    pub speedup: f64,
    /// `halide / harrow`, when Halide was measured.
    pub speedup_vs_halide: Option<f64>,
    /// Why Halide has no figure for this kernel.
    pub halide_note: Option<String>,
    /// Why Halide's figure, though measured, is not representative of Halide.
    pub halide_caveat: Option<String>,
    /// harrow's compile time for the kernel, milliseconds.
    pub compile_ms: f64,
    /// Timed runs of each implementation (1 when counted).
    pub reps: u32,
    /// llvm-mca's view of the hottest loops, when counted.
    pub hot_loop: Option<HotLoops>,
}

/// The hottest loop of harrow's code and of the baseline.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HotLoops {
    /// harrow's.
    pub harrow: LoopFigures,
    /// The scalar baseline's.
    pub clang: LoopFigures,
}

/// One hot loop.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LoopFigures {
    /// Instructions in the loop body.
    pub instructions: usize,
    /// Times the body ran.
    pub iterations: u64,
    /// llvm-mca's cycles per iteration, if it ran.
    pub mca_cycles: Option<f64>,
}

impl From<&LoopStats> for LoopFigures {
    fn from(l: &LoopStats) -> Self {
        LoopFigures {
            instructions: l.instructions,
            iterations: l.iterations,
            mca_cycles: l.cycles,
        }
    }
}

/// Geometric mean (NaN when empty).
pub fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The unit of a bench figure and the optimisation level kernels are built at, from the
/// target (HVX counts packets; see docs/isa.md).
fn unit_and_level(target: &str, metric: Metric) -> (String, &'static str) {
    match crate::targets::backend(target) {
        Ok(b) => (
            metric.unit().replace("instructions", b.target.trace_unit()),
            b.target.opt_level(crate::isa::target::Purpose::Kernel),
        ),
        Err(_) => (metric.unit().to_string(), "-O3"),
    }
}

impl BenchReport {
    /// The report of measured rows.
    pub fn new(
        target: &str,
        rows: &[BenchResult],
        backend_ms: f64,
        halide: Option<&crate::kernel::halide::Halide>,
        failures: &[String],
    ) -> BenchReport {
        let metric = rows.first().map(|r| r.metric).unwrap_or(Metric::Time);
        let (unit, opt) = unit_and_level(target, metric);
        let kernels: Vec<KernelFigures> = rows.iter().map(figures).collect();
        let sp: Vec<f64> = kernels.iter().map(|k| k.speedup).collect();
        let hv: Vec<f64> = kernels.iter().filter_map(|k| k.speedup_vs_halide).collect();
        let plain: Vec<f64> = kernels
            .iter()
            .filter(|k| k.halide_caveat.is_none())
            .filter_map(|k| k.speedup_vs_halide)
            .collect();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| geomean(v));
        BenchReport {
            target: target.to_string(),
            metric: match metric {
                Metric::Time => "time",
                Metric::Executed => "executed",
            }
            .to_string(),
            unit,
            opt_level: opt.to_string(),
            baseline_opt_level: harness::BASELINE_OPT_LEVEL.to_string(),
            geomean_speedup_vs_clang: mean(&sp),
            geomean_speedup_vs_halide: mean(&hv),
            halide_kernels: hv.len(),
            geomean_speedup_vs_halide_without_caveats: mean(&plain),
            halide_kernels_without_caveats: plain.len(),
            halide_unavailable: halide.and_then(|h| h.status.as_ref().err().cloned()),
            backend_ms,
            failures: failures.to_vec(),
            kernels,
        }
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a bench report serializes") + "\n"
    }

    /// The report as a table for people.
    pub fn table(&self, halide_asked: bool) -> String {
        let mut s = String::new();
        let timed = self.metric == "time";
        let how = if timed {
            "minimum of interleaved runs"
        } else {
            "qemu exec trace, one run each"
        };
        let base = &self.baseline_opt_level;
        let _ = writeln!(
            s,
            "harrow bench --target {}: {} ({how}); harrow's C at clang-19 {}, the scalar baseline at {base}",
            self.target, self.unit, self.opt_level
        );
        let mca = self.kernels.iter().any(|k| k.hot_loop.is_some());
        let _ = write!(
            s,
            "{:<16} {:>11} {:>7} {:>10} {:>10} {:>8}",
            "kernel",
            "size",
            "lanes",
            "harrow",
            format!("clang {base}"),
            if timed { "speedup" } else { "ratio" }
        );
        if halide_asked {
            let _ = write!(s, " {:>10} {:>9}", "halide", "vs halide");
        }
        if mca {
            let _ = write!(s, " {:>17}", "mca cyc/elem h/c");
        }
        let _ = writeln!(s, " {:>11}", "compile ms");
        for k in &self.kernels {
            self.table_row(&mut s, k, halide_asked, mca);
        }
        match self.geomean_speedup_vs_clang {
            Some(g) => {
                let _ = writeln!(
                    s,
                    "geometric mean ratio over clang {base}: {g:.3}x ({} kernels)",
                    self.kernels.len()
                );
            }
            None => {
                let _ = writeln!(s, "geometric mean ratio over clang {base}: none measured");
            }
        }
        if halide_asked {
            match (&self.halide_unavailable, self.geomean_speedup_vs_halide) {
                (Some(why), _) => {
                    let _ = writeln!(s, "halide column: {why}");
                }
                (None, Some(g)) => {
                    let _ = writeln!(
                        s,
                        "geometric mean ratio over Halide 21: {g:.3}x ({} kernels)",
                        self.halide_kernels
                    );
                    if self.halide_kernels_without_caveats < self.halide_kernels {
                        let _ = writeln!(
                            s,
                            "  without the {} kernels whose Halide figure carries a caveat (below): {}",
                            self.halide_kernels - self.halide_kernels_without_caveats,
                            match self.geomean_speedup_vs_halide_without_caveats {
                                Some(g) => format!(
                                    "{g:.3}x ({} kernels)",
                                    self.halide_kernels_without_caveats
                                ),
                                None => "none left".into(),
                            }
                        );
                    }
                }
                (None, None) => {
                    let _ = writeln!(s, "geometric mean ratio over Halide 21: none measured");
                }
            }
        }
        for k in &self.kernels {
            if let Some(note) = &k.halide_note {
                let _ = writeln!(s, "halide, {}: {note}", k.name);
            }
            if let Some(why) = &k.halide_caveat {
                let _ = writeln!(s, "halide, {}: {why}", k.name);
            }
        }
        let max_ms = self
            .kernels
            .iter()
            .map(|k| k.compile_ms)
            .fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "compile time: max {max_ms:.3} ms per kernel (backend tables built once: {:.1} ms)",
            self.backend_ms
        );
        for f in &self.failures {
            let _ = writeln!(s, "FAILED {f}");
        }
        s
    }

    fn table_row(&self, s: &mut String, k: &KernelFigures, halide: bool, mca: bool) {
        let size: Vec<String> = k.extents.iter().map(|e| e.to_string()).collect();
        let _ = write!(
            s,
            "{:<16} {:>11} {:>7} {:>10.4} {:>10.4} {:>7.2}x",
            k.name,
            size.join("x"),
            k.lanes,
            k.harrow,
            k.clang,
            k.speedup
        );
        if halide {
            match (k.halide, k.speedup_vs_halide) {
                (Some(h), Some(r)) => {
                    let _ = write!(s, " {h:>10.4} {r:>8.2}x");
                }
                _ => {
                    let _ = write!(s, " {:>10} {:>9}", "-", "-");
                }
            }
        }
        if mca {
            let outputs = k.extents.iter().product::<i64>().max(1) as f64;
            let c = |l: &LoopFigures| match l.mca_cycles {
                Some(c) => format!("{:.2}", c * l.iterations as f64 / outputs),
                None => "-".into(),
            };
            let text = match &k.hot_loop {
                Some(h) => format!("{}/{}", c(&h.harrow), c(&h.clang)),
                None => "-".into(),
            };
            let _ = write!(s, " {text:>17}");
        }
        let _ = writeln!(s, " {:>11.3}", k.compile_ms);
    }
}

fn figures(r: &BenchResult) -> KernelFigures {
    KernelFigures {
        name: r.name.clone(),
        extents: r.extents.clone(),
        lanes: r.lanes,
        harrow: r.harrow_per_elem,
        clang: r.scalar_per_elem,
        halide: r.halide_per_elem,
        speedup: r.speedup(),
        speedup_vs_halide: r.halide_per_elem.map(|h| h / r.harrow_per_elem),
        halide_note: r.halide_note.clone(),
        halide_caveat: r.halide_caveat.clone(),
        compile_ms: r.compile_us / 1e3,
        reps: r.reps,
        hot_loop: r.loops.as_ref().map(|(h, c)| HotLoops {
            harrow: h.into(),
            clang: c.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, harrow: f64, halide: Option<f64>, caveat: Option<&str>) -> BenchResult {
        BenchResult {
            name: name.into(),
            extents: vec![64],
            lanes: 16,
            harrow_per_elem: harrow,
            scalar_per_elem: 4.0,
            reps: 5,
            compile_us: 1000.0,
            halide_per_elem: halide,
            halide_note: None,
            halide_caveat: caveat.map(String::from),
            metric: Metric::Time,
            loops: None,
        }
    }

    #[test]
    fn the_second_halide_mean_leaves_out_caveated_kernels_and_the_table_says_why() {
        let rows = [
            row("a", 1.0, Some(2.0), None),
            row("b", 2.0, Some(2.0), None),
            row("c", 1.0, Some(8.0), Some("Halide scalarizes it")),
            row("d", 1.0, None, None),
        ];
        let r = BenchReport::new("x86-avx2", &rows, 1.0, None, &[]);
        assert_eq!(r.halide_kernels, 3);
        assert_eq!(r.halide_kernels_without_caveats, 2);
        let with = r.geomean_speedup_vs_halide.unwrap();
        let without = r.geomean_speedup_vs_halide_without_caveats.unwrap();
        assert!((with - (2.0f64 * 1.0 * 8.0).powf(1.0 / 3.0)).abs() < 1e-12);
        assert!((without - 2.0f64.sqrt()).abs() < 1e-12);
        let t = r.table(true);
        assert!(t.contains("halide, c: Halide scalarizes it"), "{t}");
        assert!(t.contains("without the 1 kernels"), "{t}");
        let back: BenchReport = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
    }
}
