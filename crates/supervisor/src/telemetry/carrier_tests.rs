use super::*;

#[test]
fn a_valid_traceparent_names_its_trace_and_span() {
    let p = TraceParent::parse(
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        Some("vendor=x"),
    )
    .unwrap();
    assert_eq!(
        p.header(),
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    assert_eq!(p.0.trace_state().header(), "vendor=x");
}

#[test]
fn invalid_traceparents_are_refused() {
    for bad in [
        "",
        "garbage",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        "zz-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    ] {
        assert!(TraceParent::parse(bad, None).is_none(), "{bad:?}");
    }
}
