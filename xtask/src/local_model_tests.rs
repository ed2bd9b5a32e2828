use super::*;

#[test]
fn build_percent_is_the_last_progress_mark() {
    let log = "-- Configuring done\n\
               [  3%] Building C object ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o\n\
               [ 38%] Building CXX object src/CMakeFiles/llama.dir/llama-model.cpp.o\n\
               In file included from tools/server/server.cpp:1:\n\
               [100%] Linking CXX executable ../../bin/llama-server\n\
               note: a warning without a mark\n";
    assert_eq!(build_percent(log), Some(100));
}

#[test]
fn a_log_without_progress_marks_has_no_percentage() {
    assert_eq!(build_percent(""), None);
    assert_eq!(
        build_percent("-- Build files have been written\n[x] not a mark"),
        None
    );
}

#[test]
fn progress_waits_for_the_build_and_returns_its_result() {
    let log = Path::new("no-such-build.log");
    assert!(with_progress(log, || Ok(())).is_ok());
    let error = with_progress(log, || bail!("cmake failed")).unwrap_err();
    assert_eq!(error.to_string(), "cmake failed");
}
