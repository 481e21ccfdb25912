//! The one place programs are built and run: every site that compiles C for a target
//! (the hardware check, batched cases, conformance assembly, `harrow compile --emit asm`,
//! kernel programs and their baselines) goes through [`Compile`], with the flags and the
//! optimisation level its [`Purpose`] has on that target (`TargetSpec::toolchain`), and
//! every program runs through [`run`] with the target's runner.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::target::{Purpose, Target};

/// Why a program could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A tool is not installed.
    #[error(
        "`{tool}` is not installed; install it with `apt-get install {package}` (or run scripts/install-deps.sh)"
    )]
    Missing {
        /// The command.
        tool: String,
        /// The Debian package that has it.
        package: String,
    },
    /// A file or directory could not be written or read.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was attempted (`write`, `create`).
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// A command could not be started.
    #[error("cannot run {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// A command ran and failed.
    #[error("{command} failed ({status}):\n{output}")]
    Failed {
        /// The command line.
        command: String,
        /// How it ended.
        status: std::process::ExitStatus,
        /// Its standard error, then the start of its standard output.
        output: String,
    },
}

impl ToolError {
    /// True when the command was ended by a signal (a crash, not an exit code).
    pub fn is_crash(&self) -> bool {
        matches!(self, ToolError::Failed { status, .. } if status.code().is_none())
    }
}

impl From<ToolError> for String {
    fn from(e: ToolError) -> String {
        e.to_string()
    }
}

/// Checks that a tool exists, with a message saying how to install it.
pub fn require(tool: &str, package: &str) -> Result<(), ToolError> {
    match Command::new(tool).arg("--version").output() {
        Ok(_) => Ok(()),
        Err(_) => Err(ToolError::Missing {
            tool: tool.to_string(),
            package: package.to_string(),
        }),
    }
}

/// Checks that the target's compiler and runner are installed.
pub fn require_toolchain(target: &dyn Target) -> Result<(), ToolError> {
    let t = &target.spec().toolchain;
    require(t.compiler, t.compiler_package)?;
    if let Some(runner) = t.runner.first() {
        require(runner, t.runner_package)?;
    }
    Ok(())
}

/// Writes `text` to `dir/name` (creating `dir`), returning the path.
pub fn write_file(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> Result<PathBuf, ToolError> {
    std::fs::create_dir_all(dir).map_err(|source| ToolError::Io {
        action: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| ToolError::Io {
        action: "write",
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// What a compile produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// A program (linked).
    Executable,
    /// Assembly text (`-S`).
    Assembly,
    /// An object file to link later (`-c`).
    Object,
}

/// One compile for a target: sources, extra arguments, the output.
pub struct Compile<'t> {
    target: &'t dyn Target,
    purpose: Purpose,
    args: Vec<OsString>,
}

impl<'t> Compile<'t> {
    /// A compile for `purpose` on `target` (its flags and optimisation level).
    pub fn new(target: &'t dyn Target, purpose: Purpose) -> Self {
        Compile {
            target,
            purpose,
            args: Vec::new(),
        }
    }

    /// Adds a source, object or library argument (in order).
    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    /// Adds several arguments (in order).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Compiles into `out`.
    pub fn output(self, out: &Path, kind: Output) -> Result<(), ToolError> {
        let (cc, flags) = self.target.compiler();
        require(&cc, self.target.spec().toolchain.compiler_package)?;
        let mut cmd = Command::new(&cc);
        cmd.args(&flags)
            .arg(self.target.opt_level(self.purpose))
            // Generated code is read by people through `--emit`; warnings would only be
            // noise in an error message.
            .arg("-w");
        match kind {
            Output::Executable => {}
            Output::Assembly => {
                cmd.args(["-S", "-fno-asynchronous-unwind-tables"]);
            }
            Output::Object => {
                cmd.arg("-c");
            }
        }
        cmd.arg("-o").arg(out).args(&self.args);
        run_command(cmd, None).map(|_| ())
    }
}

/// The assembly clang makes of the C text `c` for `purpose` (built in a scratch directory
/// that is removed afterwards).
pub fn assembly(target: &dyn Target, purpose: Purpose, c: &str) -> Result<String, ToolError> {
    let dir = scratch("asm");
    let src = write_file(&dir, "code.c", c)?;
    let asm = dir.join("code.s");
    Compile::new(target, purpose)
        .arg(&src)
        .output(&asm, Output::Assembly)?;
    std::fs::read_to_string(&asm).map_err(|source| ToolError::Io {
        action: "read",
        path: asm,
        source,
    })
}

/// Runs the program `exe` for `target` (through its runner) with `args`, feeding `stdin`,
/// and returns its standard output.
pub fn run(
    target: &dyn Target,
    exe: &Path,
    args: &[&str],
    stdin: &[u8],
) -> Result<Vec<u8>, ToolError> {
    let t = &target.spec().toolchain;
    if let Some(runner) = t.runner.first() {
        require(runner, t.runner_package)?;
    }
    let mut cmd = target.run_command(exe);
    cmd.args(args);
    run_command(cmd, Some(stdin))
}

/// Runs a tool (`cmd`, no input) and returns its standard output as text.
pub fn output_text(cmd: Command) -> Result<String, ToolError> {
    run_command(cmd, None).map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// Runs `cmd`, feeding `stdin` when given, and returns its standard output.
pub fn run_command(mut cmd: Command, stdin: Option<&[u8]>) -> Result<Vec<u8>, ToolError> {
    let command = format!("{cmd:?}");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|source| ToolError::Spawn {
        command: command.clone(),
        source,
    })?;
    // The input is written from another thread: a program that writes before it has read
    // everything would otherwise block on a full pipe while we block writing to it.
    let writer = match (stdin, child.stdin.take()) {
        (Some(data), Some(mut pipe)) => {
            let data = data.to_vec();
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&data);
            }))
        }
        _ => None,
    };
    let out = child
        .wait_with_output()
        .map_err(|source| ToolError::Spawn {
            command: command.clone(),
            source,
        })?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    if !out.status.success() {
        return Err(ToolError::Failed {
            command,
            status: out.status,
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
                    .chars()
                    .take(2000)
                    .collect::<String>()
            ),
        });
    }
    Ok(out.stdout)
}

/// A fresh scratch directory under the system temporary directory (not created), removed
/// with everything in it when dropped, on every path out of the work (a failed compile or
/// run included), unless [`Scratch::keep`] is called.
pub fn scratch(tag: &str) -> Scratch {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Scratch {
        path: std::env::temp_dir().join(format!("harrow-{tag}-{}-{n}", std::process::id())),
        keep: false,
    }
}

/// A scratch directory (see [`scratch`]); it reads as its path.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Scratch {
    /// Leaves the directory in place when dropped (for the user to inspect).
    pub fn keep(&mut self) -> &Path {
        self.keep = true;
        &self.path
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory goes with everything in it however its work ends (an early
    /// return from a failed step drops it too), and stays when kept.
    #[test]
    fn scratch_directories_are_removed_unless_kept() {
        let fail = || -> Result<PathBuf, std::io::Error> {
            let dir = scratch("test");
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("code.c"), "int main(void) { return 0; }\n")?;
            let path = dir.to_path_buf();
            Err(std::io::Error::other(path.display().to_string()))
        };
        let path = PathBuf::from(fail().unwrap_err().to_string());
        assert!(!path.exists(), "{} was left behind", path.display());

        let mut kept = scratch("test");
        std::fs::create_dir_all(&kept).unwrap();
        let path = kept.keep().to_path_buf();
        drop(kept);
        assert!(path.is_dir(), "{} was removed though kept", path.display());
        std::fs::remove_dir_all(&path).unwrap();
    }
}
