//! `harrow bench --plot FILE.svg`: the per-kernel speedups of a [`BenchReport`] as a bar
//! chart, one row per kernel, one bar per baseline (clang -O3, and Halide 21 where it was
//! measured), on a logarithmic axis with the break-even line at 1x.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::bench_report::BenchReport;

/// Pixel height of one kernel's row.
const ROW_PX: u32 = 26;
/// Colours: harrow over clang, harrow over Halide.
const VS_CLANG: RGBColor = RGBColor(0x2b, 0x6c, 0xb0);
const VS_HALIDE: RGBColor = RGBColor(0xdd, 0x84, 0x2a);
/// Harrow over Halide where Halide's code is not representative (a caveat).
const VS_HALIDE_CAVEAT: RGBColor = RGBColor(0xf2, 0xc8, 0x9b);

/// Draws the report as an SVG document.
pub fn svg(report: &BenchReport) -> Result<String, String> {
    let n = report.kernels.len().max(1);
    let height = 140 + ROW_PX * n as u32;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, height)).into_drawing_area();
        draw(&root, report).map_err(|e| format!("cannot draw the bench chart: {e}"))?;
        root.present()
            .map_err(|e| format!("cannot draw the bench chart: {e}"))?;
    }
    Ok(out)
}

/// The axis range: every ratio and 1x inside, with some room.
fn x_range(report: &BenchReport) -> (f64, f64) {
    let ratios = report
        .kernels
        .iter()
        .flat_map(|k| std::iter::once(k.speedup).chain(k.speedup_vs_halide))
        .filter(|r| r.is_finite() && *r > 0.0);
    let (lo, hi) = ratios.fold((1.0f64, 1.0f64), |(l, h), r| (l.min(r), h.max(r)));
    (lo / 1.5, hi * 1.5)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn draw(root: &Area<'_>, report: &BenchReport) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let n = report.kernels.len();
    let (lo, hi) = x_range(report);
    let title = format!(
        "harrow speedup on {} ({}; higher is better)",
        report.target, report.unit
    );
    let names: Vec<String> = report.kernels.iter().map(|k| k.name.clone()).collect();
    let (head, body) = root.split_vertically(64);
    head.draw(&Text::new(
        title,
        (150, 10),
        ("sans-serif", 18).into_font().color(&BLACK),
    ))?;
    let caveats = report
        .kernels
        .iter()
        .any(|k| k.speedup_vs_halide.is_some() && k.halide_caveat.is_some());
    legend(
        &head,
        report.kernels.iter().any(|k| k.speedup_vs_halide.is_some()),
        caveats,
    )?;
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(130)
        .build_cartesian_2d((lo..hi).log_scale(), (0..n.max(1) - 1).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("speedup (x, log scale)")
        .x_label_formatter(&|x| format!("{x:.2}"))
        // Row labels are drawn below: the axis's own key points skip a lone row.
        .y_labels(1)
        .y_label_formatter(&|_| String::new())
        .draw()?;
    let halide = report.kernels.iter().any(|k| k.speedup_vs_halide.is_some());
    // Each row holds one bar per baseline; margins in pixels split it.
    let row_px = chart.plotting_area().dim_in_pixel().1 / n.max(1) as u32;
    let pad = row_px / 8;
    for (j, k) in report.kernels.iter().enumerate() {
        let i = n - 1 - j;
        let row = |ratio: f64, slot: u32, slots: u32, colour: RGBColor| {
            let mut bar = Rectangle::new(
                [
                    (lo, SegmentValue::Exact(i)),
                    (ratio, SegmentValue::Exact(i + 1)),
                ],
                colour.filled(),
            );
            let per = (row_px - 2 * pad) / slots;
            let top = pad + per * slot;
            let bottom = row_px.saturating_sub(top + per);
            bar.set_margin(top, bottom, 0, 0);
            bar
        };
        let slots = if halide { 2 } else { 1 };
        // A ratio that is not a positive number (a zero-time figure) draws no bar.
        let drawable = |r: f64| r.is_finite() && r > 0.0;
        if drawable(k.speedup) {
            chart.draw_series(std::iter::once(row(k.speedup, 0, slots, VS_CLANG)))?;
        }
        if let Some(h) = k.speedup_vs_halide.filter(|&h| drawable(h)) {
            let colour = if k.halide_caveat.is_some() {
                VS_HALIDE_CAVEAT
            } else {
                VS_HALIDE
            };
            chart.draw_series(std::iter::once(row(h, 1, slots, colour)))?;
        }
    }
    for (j, name) in names.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(lo, SegmentValue::CenterOf(n - 1 - j)));
        let style = ("sans-serif", 12)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(name.as_str(), (x - 6, y), style))?;
    }
    // The break-even line.
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(1.0, SegmentValue::Exact(0)), (1.0, SegmentValue::Exact(n))],
        BLACK.stroke_width(1),
    )))?;
    Ok(())
}

/// The legend: one line under the title, above the bars.
fn legend(root: &Area<'_>, halide: bool, caveats: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut entries = vec![("harrow over clang -O3 (scalar C)", VS_CLANG)];
    if halide {
        entries.push(("harrow over Halide 21", VS_HALIDE));
    }
    if caveats {
        entries.push(("(Halide's code not representative)", VS_HALIDE_CAVEAT));
    }
    let (mut x, y) = (150, 40);
    for (text, colour) in entries {
        root.draw(&Rectangle::new([(x, y), (x + 14, y + 12)], colour.filled()))?;
        root.draw(&Text::new(text, (x + 20, y), ("sans-serif", 13)))?;
        x += 250;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::bench_report::KernelFigures;

    fn kernel(name: &str, speedup: f64, vs_halide: Option<f64>) -> KernelFigures {
        KernelFigures {
            name: name.into(),
            extents: vec![64, 4],
            lanes: 16,
            harrow: 1.0,
            clang: speedup,
            halide: vs_halide,
            speedup,
            speedup_vs_halide: vs_halide,
            halide_note: None,
            halide_caveat: None,
            compile_ms: 1.0,
            reps: 1,
            hot_loop: None,
        }
    }

    fn report(kernels: Vec<KernelFigures>) -> BenchReport {
        BenchReport {
            target: "x86-avx2".into(),
            metric: "time".into(),
            unit: "ns per output element".into(),
            opt_level: "-O3".into(),
            baseline_opt_level: "-O3".into(),
            geomean_speedup_vs_clang: None,
            geomean_speedup_vs_halide: None,
            halide_kernels: 0,
            geomean_speedup_vs_halide_without_caveats: None,
            halide_kernels_without_caveats: 0,
            halide_unavailable: None,
            backend_ms: 1.0,
            failures: Vec::new(),
            kernels,
        }
    }

    /// The `<text>` contents of a well-formed SVG document (panics if it is not one).
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect()
    }

    #[test]
    fn every_kernel_is_a_labelled_row_and_halide_bars_come_with_their_legend() {
        let svg = svg(&report(vec![
            kernel("add", 2.0, Some(1.1)),
            kernel("sobel3x3", 0.8, None),
            kernel("gaussian5x5", 12.0, Some(0.9)),
        ]))
        .unwrap();
        let t = texts(&svg);
        for name in ["add", "sobel3x3", "gaussian5x5", "harrow over Halide 21"] {
            assert!(t.iter().any(|x| x == name), "{name} not in {t:?}");
        }
        // Background, two legend swatches, three clang bars and two Halide bars.
        let rects = svg.matches("<rect").count();
        assert_eq!(rects, 1 + 2 + 3 + 2, "{svg}");
    }

    #[test]
    fn empty_and_degenerate_reports_still_draw() {
        let t = texts(&svg(&report(Vec::new())).unwrap());
        assert!(!t.iter().any(|x| x.contains("Halide")), "{t:?}");
        let svg = svg(&report(vec![kernel("zero", f64::INFINITY, Some(f64::NAN))])).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        let t = texts(&svg);
        assert!(t.iter().any(|x| x == "zero"), "{t:?}");
    }
}
