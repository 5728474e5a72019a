//! `session_query::usage`: pi's number formatting in its export header (`formatTokens`,
//! `toFixed`), used to compare our totals with what pi shows.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{js_to_fixed, pi_format_cost, pi_format_tokens};

#[test]
fn tokens_below_a_thousand_as_is_then_k_then_m() {
    assert_eq!(pi_format_tokens(0.0), "0");
    assert_eq!(pi_format_tokens(999.0), "999");
    assert_eq!(pi_format_tokens(1000.0), "1.0k");
    assert_eq!(pi_format_tokens(1049.0), "1.0k");
    assert_eq!(pi_format_tokens(1050.0), "1.1k"); // 1.05 is 1.0500000000000000444
    assert_eq!(pi_format_tokens(9999.0), "10.0k");
    assert_eq!(pi_format_tokens(10000.0), "10k");
    assert_eq!(pi_format_tokens(82_500.0), "83k"); // Math.round: a tie goes up
    assert_eq!(pi_format_tokens(999_499.0), "999k");
    assert_eq!(pi_format_tokens(999_500.0), "1000k");
    assert_eq!(pi_format_tokens(1_000_000.0), "1.0M");
    assert_eq!(pi_format_tokens(43_249_999.0), "43.2M");
    assert_eq!(pi_format_tokens(43_250_000.0), "43.3M"); // 43.25 exactly: toFixed takes the larger
}

#[test]
fn to_fixed_rounds_the_exact_value_ties_to_the_larger() {
    assert_eq!(js_to_fixed(0.0, 3), "0.000");
    assert_eq!(js_to_fixed(-0.0, 3), "0.000");
    assert_eq!(js_to_fixed(0.0625, 3), "0.063"); // exact tie: larger n (Rust's {:.3} gives 0.062)
    assert_eq!(js_to_fixed(1.0005, 3), "1.000"); // 1.000499999999999989...
    assert_eq!(js_to_fixed(0.9995, 3), "1.000"); // 0.99950000000000005507...
    assert_eq!(js_to_fixed(9.9996, 3), "10.000");
    assert_eq!(js_to_fixed(-0.0001, 3), "-0.000");
    assert_eq!(js_to_fixed(-1.25, 1), "-1.3");
    assert_eq!(js_to_fixed(30.33, 0), "30");
    assert_eq!(pi_format_cost(30.3296), "$30.330");
}
