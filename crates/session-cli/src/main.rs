//! The `sessions` command.
fn main() {}
