use clap::Parser;
use pretty_assertions::assert_eq;

use super::*;

#[derive(Debug, Parser)]
struct Args {
    #[arg(long)]
    n: u32,
}

#[test]
fn every_error_ends_with_its_documented_status() {
    let usage = Args::try_parse_from(["x", "--n", "many"]).unwrap_err();
    let help = Args::try_parse_from(["x", "--help"]).unwrap_err();
    let cases = [
        (CliError::Usage(usage), exit_codes::INVALID_INPUT),
        (CliError::Usage(help), exit_codes::OK),
        (
            CliError::Input(anyhow::anyhow!("bad flag")),
            exit_codes::INVALID_INPUT,
        ),
        (
            CliError::Doctor(anyhow::anyhow!("no python3")),
            exit_codes::DOCTOR_MISSING,
        ),
    ];
    for (error, code) in cases {
        assert_eq!(error.exit_code(), code, "{error:?}");
    }
}

#[test]
fn an_error_prints_its_whole_cause_chain_on_one_line() {
    let error = CliError::Input(anyhow::anyhow!("the file is gone").context("cannot read tasks"));
    assert_eq!(error.to_string(), "cannot read tasks: the file is gone");
}
