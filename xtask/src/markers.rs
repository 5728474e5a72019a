//! Generated sections of the docs: a body kept between a begin and an end marker line, so that
//! `bench-compare` and `reliability` can rewrite their tables without touching the prose.

/// Puts `body` between `begin` and `end` in `doc`, replacing what stood between them; when the
/// markers are absent (or out of order) a `## Results` section holding them is appended. The
/// begin marker is found by `begin_prefix` (its start), so a marker whose trailing text changed
/// is still replaced.
pub fn splice(doc: &str, begin: &str, begin_prefix: &str, end: &str, body: &str) -> String {
    let generated = format!("{begin}\n{body}{end}\n");
    match (doc.find(begin_prefix), doc.find(end)) {
        (Some(b), Some(e)) if b < e => {
            let after = &doc[e + end.len()..];
            format!(
                "{}{generated}{}",
                &doc[..b],
                after.strip_prefix('\n').unwrap_or(after)
            )
        }
        _ => format!("{doc}\n## Results\n\n{generated}"),
    }
}
