use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn every_run_mode_round_trips_under_its_one_spelling() {
    let spelled: Vec<_> = RunMode::ALL
        .iter()
        .map(|mode| serde_json::to_value(mode).unwrap())
        .collect();
    assert_eq!(
        spelled,
        vec![json!("single"), json!("parallel"), json!("chain")]
    );
    for mode in RunMode::ALL {
        let text = serde_json::to_string(&mode).unwrap();
        assert_eq!(text, format!("\"{}\"", mode.as_str()));
        assert_eq!(serde_json::from_str::<RunMode>(&text).unwrap(), mode);
    }
}

#[test]
fn a_result_mode_is_spelled_as_its_run_mode_or_management() {
    let mut all: Vec<Mode> = RunMode::ALL.into_iter().map(Mode::from).collect();
    all.push(Mode::Management);
    for mode in all {
        let text = serde_json::to_string(&mode).unwrap();
        assert_eq!(text, format!("\"{}\"", mode.as_str()));
        assert_eq!(serde_json::from_str::<Mode>(&text).unwrap(), mode);
    }
    assert_eq!(
        serde_json::from_str::<Mode>("\"chain\"").unwrap(),
        Mode::Run(RunMode::Chain)
    );
}

#[test]
fn management_and_unknown_words_are_not_run_modes() {
    assert!(serde_json::from_str::<RunMode>("\"management\"").is_err());
    assert!(serde_json::from_str::<RunMode>("\"Single\"").is_err());
    assert!(serde_json::from_str::<Mode>("\"sideways\"").is_err());
    assert_eq!(Mode::Management.run_mode(), None);
    assert_eq!(
        Mode::from(RunMode::Parallel).run_mode(),
        Some(RunMode::Parallel)
    );
}
