//! Halide 21 as a second baseline (`harrow bench --vs halide`).
//!
//! `bench/halide/<kernel>.py` writes the same algorithm with Halide's Python API
//! (`pip install halide`), vectorized at the same width without parallelism, and compiles
//! it ahead of time for the target (`bench/halide/common.py`). The object and header are
//! linked into the benchmark program next to harrow's code and the scalar baseline, and its
//! output is compared with theirs before it is timed. Without Python or the `halide`
//! module the column says why instead of failing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether Halide is usable here.
pub struct Halide {
    /// The Halide include directory, or why Halide cannot be used.
    pub status: Result<PathBuf, String>,
    /// The directory of the generator scripts.
    pub scripts: PathBuf,
}

/// A Halide pipeline built for one kernel.
pub struct HalideBuild {
    /// The object file.
    pub object: PathBuf,
    /// The generated header.
    pub header: PathBuf,
    /// The include directory of `HalideRuntime.h`.
    pub include: PathBuf,
    /// Why Halide's figure on this target is not representative of Halide, as the script
    /// says (`harrow-caveat:` lines of its output).
    pub caveat: Option<String>,
}

impl Halide {
    /// Looks for `python3` with the `halide` module.
    pub fn detect() -> Halide {
        let scripts = {
            let here = PathBuf::from("bench/halide");
            if here.is_dir() {
                here
            } else {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/halide")
            }
        };
        let out = Command::new("python3")
            .args([
                "-c",
                "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'include'))",
            ])
            .output();
        let status = match out {
            Err(e) => Err(format!("Halide not available: cannot run python3 ({e})")),
            Ok(o) if !o.status.success() => {
                Err("Halide not installed (`pip install halide` gives Halide 21)".to_string())
            }
            Ok(o) => Ok(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())),
        };
        Halide { status, scripts }
    }

    /// Builds the Halide pipeline of `kernel` for `target` into `dir`; `Ok(None)` when there
    /// is no script for it, Halide is missing, or Halide has no such target.
    pub fn build(
        &self,
        kernel: &str,
        target: &crate::isa::target::TargetSpec,
        lanes: u32,
        dir: &Path,
    ) -> Result<Option<HalideBuild>, String> {
        let Ok(include) = &self.status else {
            return Ok(None);
        };
        let script = self.scripts.join(format!("{kernel}.py"));
        if !script.is_file() {
            return Ok(None);
        }
        let Some(t) = target.halide_target else {
            return Ok(None);
        };
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let mut cmd = Command::new("python3");
        cmd.arg(&script)
            .args(["--target", t, "--name", "halide_kernel", "--lanes"])
            .arg(lanes.to_string())
            .arg("--out")
            .arg(dir);
        let printed = crate::isa::toolchain::output_text(cmd).map_err(|e| {
            // Halide's own error line first (a report's note shows the first line). Halide's
            // errors come as `halide.halide_.HalideError: Error: ...`; anything else (a
            // Python error) is the script's failure, not Halide's.
            let text = e.to_string();
            match text.lines().rev().find(|l| l.contains("HalideError")) {
                Some(why) => format!(
                    "Halide 21 cannot compile {kernel} for {t}: {}\n{text}",
                    why.trim_start_matches("halide.halide_.HalideError: ")
                        .trim()
                ),
                None => format!("{kernel}: the Halide generator failed: {text}"),
            }
        })?;
        let caveats: Vec<&str> = printed
            .lines()
            .filter_map(|l| l.strip_prefix("harrow-caveat:"))
            .map(str::trim)
            .collect();
        Ok(Some(HalideBuild {
            object: dir.join("halide_kernel.o"),
            header: dir.join("halide_kernel.h"),
            include: include.clone(),
            caveat: (!caveats.is_empty()).then(|| caveats.join(" ")),
        }))
    }
}
