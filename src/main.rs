//! The `harrow` binary: parses arguments, runs the command, prints, sets the exit code.

use clap::Parser;

fn main() {
    let cli = harrow::cli::Cli::parse();
    match harrow::cli::run(cli) {
        Ok(out) => print!("{out}"),
        Err(harrow::cli::CliError::Failed(report)) => {
            // A report of problems (failed proofs, wrong results) is the command's output.
            print!("{report}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
