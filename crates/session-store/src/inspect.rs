//! The read-only open's and every manager's diagnostics ([`OpenReport`]) and the file-level
//! and structural analysis behind them.

use std::path::{Path, PathBuf};

use session_format::line::LineError;

use crate::id::Id;
use crate::index::{Index, Map, ParentStep, Set};
use crate::rows::{self, Parent, Row, RowKind};

/// A line that is not JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedLine {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub line_offset: usize,
    /// Byte offset of the JSON error.
    pub error_offset: usize,
    /// The parse error.
    pub error: String,
    /// It is the last line and has no `\n` (a torn write).
    pub torn: bool,
    /// It holds NUL bytes.
    pub nul_padded: bool,
}

/// The header problem, when the first parsed line is not a readable header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorruptHeader {
    /// 1-based line number of the `{type:"session", id}` row a writable open would promote to
    /// header, if any (else it would synthesise one).
    pub recovered_from_line: Option<usize>,
    /// Lines a writable open would drop from the live file (they stay in the backup).
    pub dropped_lines: Vec<usize>,
}

/// An entry whose `parentId` names nothing known, directly or at the end of a chain of
/// parent-linked opaque rows: its branch starts at it (nothing is re-parented; the context says
/// so in [`crate::ContextGap`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DanglingParent {
    /// The entry id.
    pub id: String,
    /// The id that names nothing: the entry's `parentId`, or, when that names a parent-linked
    /// opaque row, the `parentId` the chain of opaque rows ends at.
    pub parent_id: String,
    /// Its line (none for rows created by migration… which always have known parents).
    pub line: Option<usize>,
}

/// An id carried by more than one recognised row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateId {
    /// The id.
    pub id: String,
    /// The lines carrying it (the last one wins for lookups).
    pub lines: Vec<Option<usize>>,
}

/// A leaf control whose `targetId` or `appendParentId` is unknown (ignored by the index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidLeafControl {
    /// The control's id.
    pub id: String,
    /// Its line.
    pub line: Option<usize>,
    /// Its `targetId`.
    pub target_id: Option<String>,
}

/// A compaction whose `firstKeptEntryId`, as reads resolve it (§2.3: an opaque row's
/// canonical ancestor), names no entry. Its context is what OpenClaw 2026.6.11 and pi build for
/// it: the summary and the entries after the compaction, nothing kept before it
/// (pi-format.md §3.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DanglingFirstKept {
    /// The compaction's id.
    pub compaction_id: String,
    /// The id it keeps from; `None` when `firstKeptEntryId` is missing or not a string.
    pub first_kept_entry_id: Option<String>,
    /// The compaction's line.
    pub line: Option<usize>,
}

/// What [`SessionManager::open_read_only`](crate::SessionManager::open_read_only) found.
///
/// The read-only open loads a file exactly as a writable open would (migration and
/// corrupt-header recovery happen in memory only), never writes, and reports what a writable
/// open would repair or what it would keep tolerating: a
/// torn tail, malformed lines (line and byte offset), a corrupt header, an empty file, an
/// unmigrated version, parent cycles, dangling parents, duplicate ids, invalid leaf controls and
/// session rows after the header.
/// Writable managers give the same report through [`SessionManager::diagnostics`](crate::SessionManager::diagnostics), plus the
/// backups they wrote (corrupt header, conflicts with another writer) and the foreign lines they
/// adopted. The structural analysis is near-linear (walks bounded by a `done` set, positions
/// from a map).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpenReport {
    /// The file.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub bytes: usize,
    /// The file is empty or whitespace only (a writable open writes a fresh header).
    pub empty: bool,
    /// Lines that are not JSON (kept in place by a writable open, except under a corrupt
    /// header).
    pub malformed_lines: Vec<MalformedLine>,
    /// The last line is unterminated and not JSON (the next append writes a `\n` first).
    pub torn_tail: Option<MalformedLine>,
    /// The file does not end with `\n` (whether or not the last line parses).
    pub missing_final_newline: bool,
    /// Set when the first parsed line is not a readable header (a writable open backs the file
    /// up and rewrites it).
    pub corrupt_header: Option<CorruptHeader>,
    /// The header version (`version ?? 1`) when below 3 (a writable open migrates and rewrites).
    pub unmigrated_version: Option<f64>,
    /// Parent cycles among entries (each as the ids on the cycle, file order); a self-parent is
    /// a cycle of one.
    pub cycles: Vec<Vec<String>>,
    /// Entries whose `parentId` is neither an entry nor an opaque row.
    pub dangling_parents: Vec<DanglingParent>,
    /// Ids carried by more than one entry row.
    pub duplicate_ids: Vec<DuplicateId>,
    /// Leaf controls the index ignores.
    pub invalid_leaf_controls: Vec<InvalidLeafControl>,
    /// Compactions whose `firstKeptEntryId` names no entry, in file order.
    pub dangling_first_kept: Vec<DanglingFirstKept>,
    /// Lines of `type:"session"` rows after the header (e.g. two files joined into one): kept
    /// as opaque rows that never take part in navigation; the first header is the session's.
    pub extra_headers: Vec<Option<usize>>,
    /// Where a writable open wrote the byte-exact backup of a file with a corrupt header.
    pub corrupt_header_backup: Option<PathBuf>,
    /// Byte-exact backups (`<file>.conflict-<ts>-<8hex>.jsonl`) written before a full rewrite
    /// because the file no longer held the bytes this manager last read or wrote (another
    /// writer changed it); writable managers only.
    pub conflict_backups: Vec<PathBuf>,
    /// Lines another writer appended to the file that this manager adopted (indexed and kept
    /// verbatim) instead of overwriting them.
    pub adopted_lines: usize,
}

impl OpenReport {
    /// True when a writable open would rewrite the file (corrupt header, empty file, or a
    /// version below 3).
    pub fn writable_open_would_rewrite(&self) -> bool {
        self.corrupt_header.is_some() || self.empty || self.unmigrated_version.is_some()
    }

    /// True when nothing at all was found.
    pub fn is_clean(&self) -> bool {
        !self.writable_open_would_rewrite()
            && self.malformed_lines.is_empty()
            && !self.missing_final_newline
            && self.cycles.is_empty()
            && self.dangling_parents.is_empty()
            && self.duplicate_ids.is_empty()
            && self.invalid_leaf_controls.is_empty()
            && self.dangling_first_kept.is_empty()
            && self.extra_headers.is_empty()
            && self.conflict_backups.is_empty()
    }
}

fn malformed(err: &LineError, line_offset: usize) -> MalformedLine {
    MalformedLine {
        line: err.line,
        line_offset,
        error_offset: err.byte_offset,
        error: err.error.to_string(),
        torn: err.torn,
        nul_padded: err.nul_padded,
    }
}

impl OpenReport {
    /// Brings the file-level findings up to date with `tail`, bytes another writer appended
    /// to the file, read as `rows` (the rows of a tail reindex): as [`file_report`] would
    /// report the whole file.
    pub(crate) fn note_tail(&mut self, rows: &[Row], tail: &[u8]) {
        self.bytes = self.bytes.saturating_add(tail.len());
        self.missing_final_newline = tail.last() != Some(&b'\n');
        self.note_malformed(rows);
    }

    /// Records every malformed row of `rows` (and a torn one as the torn tail).
    fn note_malformed(&mut self, rows: &[Row]) {
        for row in rows {
            if let RowKind::Malformed(err) = &row.kind {
                let m = malformed(err, row.pos().map_or(0, |p| p.1));
                if err.torn {
                    self.torn_tail = Some(m.clone());
                }
                self.malformed_lines.push(m);
            }
        }
    }
}

/// The file-level findings of loading `buf` from `path` (nothing is analysed structurally).
pub(crate) fn file_report(path: &Path, buf: &[u8], loaded: &rows::Loaded) -> OpenReport {
    let mut report = OpenReport {
        path: path.to_path_buf(),
        bytes: buf.len(),
        empty: loaded.blank,
        missing_final_newline: !buf.is_empty() && buf.last() != Some(&b'\n'),
        ..OpenReport::default()
    };
    report.note_malformed(&loaded.rows);
    match loaded.header {
        Some(h) => {
            let v = rows::header_version(&loaded.rows[h], buf);
            if v < 3.0 {
                report.unmigrated_version = Some(v);
            }
        }
        None if !loaded.blank => {
            let mut scanner = session_format::json::EnvelopeScanner::new();
            let mut recovered_from_line = None;
            let mut dropped_lines = Vec::new();
            for row in &loaded.rows {
                let line = row.pos().map_or(0, |p| p.0);
                if matches!(row.kind, RowKind::Malformed(_)) {
                    dropped_lines.push(line);
                    continue;
                }
                if row.kind.is_session_typed() {
                    let readable = scanner
                        .scan(row.json(buf))
                        .is_ok_and(|env| matches!(env.id, session_format::json::Field::Str(_)));
                    if readable && recovered_from_line.is_none() {
                        recovered_from_line = Some(line);
                    } else {
                        dropped_lines.push(line);
                    }
                }
            }
            report.corrupt_header = Some(CorruptHeader {
                recovered_from_line,
                dropped_lines,
            });
        }
        None => {}
    }
    report
}

/// The id an entry's stored `parentId` leads to that names nothing: the parent itself when it is
/// neither an entry nor an opaque row, or the `parentId` of the last parent-linked opaque row
/// (or leaf control) on its chain. `None` when the entry has a logical parent (§2.3), or the
/// chain reaches an entry, `null` or `""`, or loops among opaque rows.
pub(crate) fn missing_parent<'a>(ix: &'a Index, id: &Id, parent: &'a Parent) -> Option<&'a Id> {
    if ix.logical_parents.contains_key(id) {
        return None;
    }
    let Parent::Str(p) = parent else {
        return None;
    };
    let mut cur = p;
    let mut seen: Set<&Id> = Set::default();
    loop {
        if cur.is_empty() || ix.by_id.contains_key(cur) || !seen.insert(cur) {
            return None;
        }
        match ix.opaque_parent(cur.as_bytes()) {
            None => return Some(cur),
            Some(None) => return None,
            Some(Some(next)) => cur = next,
        }
    }
}

/// Structural problems of the indexed rows (ids in the report are lossy text). Near-linear:
/// every walk is bounded by a `done` set and positions come from a map.
pub(crate) fn analyse(rows: &[Row], ix: &Index, report: &mut OpenReport) {
    // Duplicates (none when every entry row is its id's `byId` row).
    let all_by_id = every_entry_is_by_id(rows, ix);
    if !all_by_id {
        duplicates(rows, report);
    }
    dangling_and_leaf_problems(rows, ix, all_by_id, report);
    // Cycles over reported parents of the byId rows.
    if !surely_acyclic(rows, ix) {
        cycles(rows, ix, report);
    }
}

/// True when every entry row is the row `byId` holds for its id, so no id repeats among the
/// entries: as many entry rows as `byId` ids (`byId` holds the ids of the entry rows, each
/// once), so no hashing.
fn every_entry_is_by_id(rows: &[Row], ix: &Index) -> bool {
    rows.iter().filter(|r| r.kind.entry().is_some()).count() == ix.by_id.len()
}

/// True when no walk up the reported parents of the `byId` rows can meet itself, decided on
/// the children index's parent rows (integers, no hashing). `false` means "maybe": a cycle, or
/// a step the index cannot take by row (then [`cycles`] walks by id, exactly).
fn surely_acyclic(rows: &[Row], ix: &Index) -> bool {
    let n = rows.len();
    // 0: not reached yet; 1: on the current walk; 2: its walk ended without a cycle.
    let mut state = vec![0u8; n];
    let mut walk: Vec<usize> = Vec::new();
    for start in 0..n {
        let mut cur = start;
        loop {
            match state.get(cur) {
                Some(2) => break,
                Some(0) => {}
                _ => return false,
            }
            state[cur] = 1;
            walk.push(cur);
            match ix.parent_step(cur) {
                ParentStep::Row(j) if j < n => cur = j,
                ParentStep::End => break,
                ParentStep::Row(_) | ParentStep::ById => return false,
            }
        }
        for k in walk.drain(..) {
            state[k] = 2;
        }
    }
    true
}

fn duplicates(rows: &[Row], report: &mut OpenReport) {
    let mut seen: Map<&Id, Vec<Option<usize>>> = Map::default();
    let mut order: Vec<&Id> = Vec::new();
    for row in rows {
        if let RowKind::Entry(e) = &row.kind {
            let lines = seen.entry(&e.id).or_default();
            if lines.is_empty() {
                order.push(&e.id);
            }
            lines.push(row.pos().map(|p| p.0));
        }
    }
    for id in order {
        if let Some(lines) = seen.get(id)
            && lines.len() > 1
        {
            report.duplicate_ids.push(DuplicateId {
                id: id.text().to_owned(),
                lines: lines.clone(),
            });
        }
    }
}

/// `all_by_id`: every entry row is its id's `byId` row ([`every_entry_is_by_id`]).
fn dangling_and_leaf_problems(rows: &[Row], ix: &Index, all_by_id: bool, report: &mut OpenReport) {
    // Dangling parents. A `byId` row whose reported parent is an entry row (the children
    // index's parent row) has none: its logical parent, or a stored `parentId` that names an
    // entry or leads to one through opaque rows, and [`missing_parent`] is `None` for each.
    for (i, row) in rows.iter().enumerate() {
        if let RowKind::Entry(e) = &row.kind
            && !(all_by_id && matches!(ix.parent_step(i), ParentStep::Row(_)))
            && let Some(missing) = missing_parent(ix, &e.id, &e.parent)
        {
            report.dangling_parents.push(DanglingParent {
                id: e.id.text().to_owned(),
                parent_id: missing.text().to_owned(),
                line: row.pos().map(|p| p.0),
            });
        }
    }
    // Session rows after the header.
    for row in rows {
        if let RowKind::Opaque { session: true, .. } = row.kind {
            report.extra_headers.push(row.pos().map(|p| p.0));
        }
    }
    // Invalid leaf controls.
    for row in rows {
        if let RowKind::Leaf(l) = &row.kind
            && ix.invalid_leaf.contains(&l.id)
        {
            report.invalid_leaf_controls.push(InvalidLeafControl {
                id: l.id.text().to_owned(),
                line: row.pos().map(|p| p.0),
                target_id: l.target.as_ref().map(|t| t.text().to_owned()),
            });
        }
    }
}

/// Every cycle among the reported parents of the `byId` rows, each in file order.
fn cycles(rows: &[Row], ix: &Index, report: &mut OpenReport) {
    let parent_of = |id: &Id| -> Option<Id> {
        let &i = ix.by_id.get(id)?;
        let e = rows.get(i)?.kind.entry()?;
        ix.normalized_parent(&e.id, &e.parent)
            .as_id()
            .filter(|p| ix.by_id.contains_key(*p))
            .cloned()
    };
    let position: Map<&Id, usize> = ix
        .id_order
        .iter()
        .enumerate()
        .map(|(k, id)| (id, k))
        .collect();
    let mut done: Set<Id> = Set::default();
    for id in &ix.id_order {
        if done.contains(id) {
            continue;
        }
        let mut walk: Vec<Id> = Vec::new();
        let mut at: Map<Id, usize> = Map::default();
        let mut cur = Some(id.clone());
        while let Some(c) = cur.take() {
            if done.contains(&c) {
                break;
            }
            if let Some(&k) = at.get(&c) {
                let mut cycle: Vec<&Id> = walk[k..].iter().collect();
                cycle.sort_by_key(|s| position.get(*s).copied().unwrap_or(0));
                report
                    .cycles
                    .push(cycle.into_iter().map(|s| s.text().to_owned()).collect());
                break;
            }
            at.insert(c.clone(), walk.len());
            walk.push(c.clone());
            cur = parent_of(&c);
        }
        done.extend(walk);
    }
}
