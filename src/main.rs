//! The `harrow` binary: parses arguments, runs the command, prints, sets the exit code.

use std::io::Write;

include!("main/allocator.rs");

/// Writes `text` to standard output. A reader that went away (`harrow ... | head`) ends
/// the program quietly, as other command-line tools do, instead of a panic.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write the output: {e}");
        std::process::exit(1);
    }
}

fn main() {
    keep_freed_memory_a_while();
    let cli = harrow::cli::parse_args();
    match harrow::cli::run(cli) {
        Ok(out) => print_out(&out),
        Err(harrow::cli::CliError::Failed(report)) => {
            // A report of problems (failed proofs, wrong results) is the command's output.
            print_out(&report);
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
