use super::*;

const EDIT: SourceEdit = SourceEdit {
    file: "x.cpp",
    anchor: "    // FIXME\n",
    replacement: "    check();\n",
    why: "a test edit",
};

#[test]
fn an_edit_replaces_its_anchor_once() {
    let edited = apply_to_text("int f() {\n    // FIXME\n    return 1;\n}\n", &EDIT).unwrap();
    assert_eq!(edited, "int f() {\n    check();\n    return 1;\n}\n");
}

#[test]
fn an_edit_whose_anchor_is_gone_names_the_file_and_what_to_update() {
    let error = apply_to_text("int f() { return 1; }\n", &EDIT)
        .unwrap_err()
        .to_string();
    assert!(error.contains("x.cpp"), "{error}");
    assert!(error.contains("a test edit"), "{error}");
    assert!(error.contains("xtask/src/llama_portable.rs"), "{error}");
}

#[test]
fn an_edit_whose_anchor_repeats_is_refused() {
    let error = apply_to_text("    // FIXME\n    // FIXME\n", &EDIT)
        .unwrap_err()
        .to_string();
    assert!(error.contains("2 times"), "{error}");
}

#[test]
fn the_label_names_the_architecture_and_the_dispatch_build() {
    let label = build_label();
    assert!(label.starts_with(std::env::consts::ARCH), "{label}");
    assert!(label.contains("cpu-dispatch"), "{label}");
}

#[test]
fn nothing_is_compiled_for_the_build_machine() {
    assert!(PORTABLE_FLAGS.contains(&"-DGGML_NATIVE=OFF"));
    assert!(!PORTABLE_FLAGS.iter().any(|flag| flag.contains("march")));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_x86_edits_check_xcr0_and_leave_out_amx() {
    let edits = source_edits();
    assert!(edits.iter().any(|e| e.replacement.contains("xgetbv")));
    assert!(
        edits
            .iter()
            .any(|e| e.anchor.contains("sapphirerapids") && !e.replacement.contains("variant("))
    );
}
