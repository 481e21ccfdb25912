//! The `harrow` binary: parses arguments, runs the command, prints, sets the exit code.

use clap::Parser;

fn main() {
    let cli = harrow::cli::Cli::parse();
    match harrow::cli::run(cli) {
        Ok(out) => print!("{out}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
