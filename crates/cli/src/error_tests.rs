use pretty_assertions::assert_eq;

use super::*;

#[test]
fn an_error_prints_its_whole_cause_chain_on_one_line() {
    let error = CliError::Input(anyhow::anyhow!("the file is gone").context("cannot read tasks"));
    assert_eq!(error.to_string(), "cannot read tasks: the file is gone");
}

#[test]
fn a_cause_chain_is_classified_by_its_marker_wherever_it_sits() {
    let io = || std::io::Error::other("no space left on device");
    let lost = CliError::from(
        anyhow::Error::from(io())
            .context(RecordLost(RESULT_NOT_WRITTEN))
            .context("run"),
    );
    assert!(matches!(lost, CliError::RecordLost(_)), "{lost:?}");
    assert_eq!(
        lost.to_string(),
        "run: cannot write the result to stdout: no space left on device"
    );
    let unstarted = CliError::from(anyhow::Error::from(io()).context(Unstarted("no runtime")));
    assert!(matches!(unstarted, CliError::Runtime(_)), "{unstarted:?}");
    let input = CliError::from(anyhow::anyhow!("bad flag").context("parsing"));
    assert!(matches!(input, CliError::Input(_)), "{input:?}");
}
