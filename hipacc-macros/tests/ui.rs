//! Compile-fail tests: each file in `tests/ui/` uses one construct outside
//! the kernel subset (or a malformed kernel struct), and its `.stderr` pins
//! the message and its span.

#[test]
fn rejected_constructs() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
