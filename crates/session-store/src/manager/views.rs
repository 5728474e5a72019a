//! Read-only views of what a load indexed, for tools that inspect a file (`sessions check`,
//! `stats`) without reading it again or parsing every row: the file's bytes as the load read
//! them and, for each row still held as a span of those bytes, its line, offset, exact bytes,
//! the part `JSON.parse` sees and how the index classified it.

use session_format::entry::EntryType;

use crate::rows::RowKind;

use super::SessionManager;

/// How the load's index classified a row of the file ([`FileRow::class`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileRowClass {
    /// Not JSON (kept in place; the open's report lists it).
    Malformed,
    /// The session header (the first parsed row, a readable `type:"session"` row).
    Header,
    /// A recognised entry of this type (a known `type` with a non-empty string `id`).
    Entry(EntryType),
    /// Any other JSON row (opaque rows, parent-linked opaque rows, leaf controls, rows of a
    /// version 1 file without ids): read its envelope to know more.
    Other,
}

/// One row of the loaded file, borrowed from the manager ([`SessionManager::file_rows`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRow<'a> {
    /// 1-based line number in the file.
    pub line: usize,
    /// Byte offset of the line's first byte in the file.
    pub offset: usize,
    /// The line's exact bytes, without the terminating LF (a CR before it stays).
    pub bytes: &'a [u8],
    /// The part of the line `JSON.parse` sees (JavaScript whitespace trimmed on the file's
    /// first and last non-blank lines), as [`session_format::line::ReadLine::json`].
    pub json: &'a [u8],
    /// How the index classified the row.
    pub class: FileRowClass,
}

impl SessionManager {
    /// The bytes of the session file as the last load read them, shared with the rows (no
    /// copy). For a read-only open these are exactly the file's bytes, except for an empty or
    /// whitespace-only file, whose buffer is not kept (empty); a manager that never loaded a
    /// file gives an empty slice.
    pub fn file_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The rows read from the file that are still spans of [`SessionManager::file_bytes`], in
    /// file order (blank lines are not rows). Rows a migration rewrote, rows created in this
    /// process and rows a corrupt-header recovery dropped are not included, so this is every
    /// non-blank line of the file exactly when its length equals the file's number of non-blank
    /// lines.
    pub fn file_rows(&self) -> impl Iterator<Item = FileRow<'_>> + '_ {
        self.rows.iter().filter_map(|row| {
            let ((start, end), (j0, j1)) = row.file_span(&self.buf)?;
            let (line, offset) = row.pos()?;
            let bytes = self.buf.get(start..end)?;
            let json = bytes.get(j0..j1)?;
            let class = match &row.kind {
                RowKind::Malformed(_) => FileRowClass::Malformed,
                RowKind::Header => FileRowClass::Header,
                RowKind::Entry(e) => FileRowClass::Entry(e.ty),
                RowKind::Legacy
                | RowKind::Leaf(_)
                | RowKind::Linked { .. }
                | RowKind::Opaque { .. } => FileRowClass::Other,
            };
            Some(FileRow {
                line,
                offset,
                bytes,
                json,
                class,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_the_file_lines_with_their_classes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let text = b"{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"cwd\":\"/w\"}\n\
\n\
{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\r\n\
not json\n\
null\n";
        crate::io::write_raw(&path, text).unwrap();
        let ro = SessionManager::open_read_only(&path, None).unwrap();
        let sm = &ro.session;
        assert_eq!(sm.file_bytes(), &text[..]);
        let rows: Vec<FileRow<'_>> = sm.file_rows().collect();
        let summary: Vec<(usize, usize, FileRowClass)> =
            rows.iter().map(|r| (r.line, r.offset, r.class)).collect();
        assert_eq!(
            summary,
            vec![
                (1, 0, FileRowClass::Header),
                (3, 53, FileRowClass::Entry(EntryType::Message)),
                (4, 139, FileRowClass::Malformed),
                (5, 148, FileRowClass::Other),
            ]
        );
        assert_eq!(rows[1].bytes.last(), Some(&b'\r'));
        assert_eq!(rows[1].json, rows[1].bytes);
        assert_eq!(rows[3].json, b"null");
    }
}
