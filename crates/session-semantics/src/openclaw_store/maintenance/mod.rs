//! OpenClaw's session maintenance (openclaw-store.md §4): the `session.maintenance` settings
//! (§4.1), a pure planner over a loaded store and a scan of its directory that selects rows and
//! files exactly as the reference's `sessions cleanup` preview does (§4.3–§4.6, R4.14), and
//! the application of such a plan.
//!
//! | file | what |
//! |---|---|
//! | this one | [`MaintenanceConfig`] (R4.1–R4.2) |
//! | `scan` | [`DirScan`]: the top-level regular files of a sessions directory (R1.15) and what each row's transcript and sidecars are |
//! | `plan` | [`plan_maintenance`] → [`MaintenancePlan`]: fix-missing, stale prune, cap, disk budget, unreferenced sweep, archive retention |
//! | `apply` | [`apply_plan`]: the rows removed in one save, then the files renamed in place |
//!
//! Difference on purpose (docs/DEVIATIONS.md D38): applying a plan deletes nothing. The rows go
//! from `sessions.json` first (one save), then every file the reference would delete or archive
//! is renamed in place to `<file>.deleted.<ARCHIVE_TS of now>` (transcripts and their trajectory
//! sidecars alike; a transcript another row still references is left alone), and archives past
//! their retention (which the reference deletes, R4.9) are kept and reported.

use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsValue, JsonError, parse_value};

use crate::policy::{DurationUnit, parse_byte_size, parse_duration_ms};

mod apply;
mod plan;
mod scan;

pub use apply::{AppliedFile, ApplyError, ApplyOptions, ApplyReport, FileOutcome, apply_plan};
pub use plan::{
    DiskBudgetSummary, FileReason, MaintenancePlan, OUTSIDE_STORE, PlanOptions, PlannedFile,
    PlannedRename, RemovalReason, RemovedRow, SweepSummary, entry_high_water, is_preserved,
    plan_maintenance,
};
pub use scan::{DirScan, PathProbe, ScannedFile};

/// The default `pruneAfter`: 30 days in milliseconds (R4.1).
pub const DEFAULT_PRUNE_AFTER_MS: u64 = 30 * 86_400_000;
/// The default `maxEntries` (R4.1).
pub const DEFAULT_MAX_ENTRIES: i64 = 500;

/// `session.maintenance.mode` (R4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaintenanceMode {
    /// Rows and files are removed (the default).
    Enforce,
    /// Nothing is removed; the preview still counts (R4.14).
    Warn,
}

impl MaintenanceMode {
    /// `enforce` or `warn`, as the reference prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            MaintenanceMode::Enforce => "enforce",
            MaintenanceMode::Warn => "warn",
        }
    }
}

/// The resolved `session.maintenance` settings (`resolveMaintenanceConfigFromInput`, R4.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaintenanceConfig {
    /// `mode`: `warn` when written so, else `enforce`.
    pub mode: MaintenanceMode,
    /// `pruneAfter` (legacy `pruneDays`) in milliseconds: a duration, bare numbers in days;
    /// unset or unparsable gives 30 days.
    pub prune_after_ms: u64,
    /// `maxEntries` (a JSON number, truncated toward zero; anything else gives 500).
    pub max_entries: i64,
    /// `resetArchiveRetention` in milliseconds; `None` when it is `false` (disabled); unset or
    /// unparsable gives `prune_after_ms`.
    pub reset_archive_retention_ms: Option<u64>,
    /// `maxDiskBytes` (a byte size, bare numbers in bytes); `None` (no disk budget) when unset
    /// or unparsable.
    pub max_disk_bytes: Option<u64>,
    /// `highWaterBytes`, clamped to `max_disk_bytes`; default `max(1, floor(0.8·max))`, 0 when
    /// the max is 0; `None` exactly when `max_disk_bytes` is.
    pub high_water_bytes: Option<u64>,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        MaintenanceConfig::from_maintenance(None)
    }
}

/// A config file whose `session.maintenance` could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MaintenanceConfigError {
    /// The file is not JSON (JSON5 comments and trailing commas are not read either).
    #[error("config {} is not valid JSON at byte {offset}: {source}", path.display())]
    Corrupt {
        /// The config file.
        path: PathBuf,
        /// Byte offset of the error.
        offset: usize,
        /// The parser's error.
        source: JsonError,
    },
    /// Reading the file failed.
    #[error("config {}: {source}", path.display())]
    Io {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// `normalizeStringifiedOptionalString`: a string trimmed (empty → none), a number or boolean
/// as `String(value)`; anything else none.
fn stringified(value: Option<&JsValue>) -> Option<String> {
    let text = match value? {
        JsValue::String(s) => s.to_str_lossy().into_owned(),
        JsValue::Number(n) => session_format::json::number_to_string(*n),
        JsValue::Bool(b) => b.to_string(),
        _ => return None,
    };
    let trimmed = session_format::js::trim(&text);
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

impl MaintenanceConfig {
    /// The settings of a `session.maintenance` object (`None`: every default), as
    /// `resolveMaintenanceConfigFromInput` resolves them (R4.1).
    pub fn from_maintenance(maintenance: Option<&JsObject>) -> Self {
        let field = |name: &str| maintenance.and_then(|m| m.get(name));
        let prune_after_ms = stringified(field("pruneAfter").or_else(|| field("pruneDays")))
            .and_then(|t| parse_duration_ms(&t, DurationUnit::Days).ok())
            .unwrap_or(DEFAULT_PRUNE_AFTER_MS);
        let reset_archive_retention_ms = match field("resetArchiveRetention") {
            Some(JsValue::Bool(false)) => None,
            raw => Some(
                stringified(raw)
                    .and_then(|t| parse_duration_ms(&t, DurationUnit::Days).ok())
                    .unwrap_or(prune_after_ms),
            ),
        };
        let max_disk_bytes =
            stringified(field("maxDiskBytes")).and_then(|t| parse_byte_size(&t).ok());
        let high_water_bytes = max_disk_bytes.map(|max| {
            let default = if max == 0 {
                0
            } else {
                // floor(0.8 · max) as the reference's double computes it.
                ((max as f64 * 0.8).floor() as u64).clamp(1, max)
            };
            stringified(field("highWaterBytes"))
                .and_then(|t| parse_byte_size(&t).ok())
                .map_or(default, |hw| hw.min(max))
        });
        let max_entries = match field("maxEntries") {
            Some(JsValue::Number(n)) if n.is_finite() => n.trunc() as i64,
            _ => DEFAULT_MAX_ENTRIES,
        };
        let mode = match field("mode") {
            Some(JsValue::String(s)) if s.as_str() == Some("warn") => MaintenanceMode::Warn,
            _ => MaintenanceMode::Enforce,
        };
        MaintenanceConfig {
            mode,
            prune_after_ms,
            max_entries,
            reset_archive_retention_ms,
            max_disk_bytes,
            high_water_bytes,
        }
    }

    /// The settings of an OpenClaw config document (`openclaw.json`): its
    /// `session.maintenance` object, when the top level and `session` are objects.
    ///
    /// # Errors
    /// [`MaintenanceConfigError::Corrupt`] when `text` is not JSON (`path` names the file).
    pub fn from_config_json(path: &Path, text: &[u8]) -> Result<Self, MaintenanceConfigError> {
        let value = parse_value(text).map_err(|source| MaintenanceConfigError::Corrupt {
            path: path.to_path_buf(),
            offset: source.offset,
            source,
        })?;
        let maintenance = value
            .as_object()
            .and_then(|top| top.get("session"))
            .and_then(JsValue::as_object)
            .and_then(|session| session.get("maintenance"))
            .and_then(JsValue::as_object);
        Ok(MaintenanceConfig::from_maintenance(maintenance))
    }

    /// The settings of the config file at `path` (`$OPENCLAW_CONFIG_PATH`, or
    /// `<stateDir>/openclaw.json`, R1.5): every default when the file does not exist.
    ///
    /// # Errors
    /// [`MaintenanceConfigError`] when the file exists but cannot be read or is not JSON.
    pub fn load(path: &Path) -> Result<Self, MaintenanceConfigError> {
        match session_store::io::read_file(path) {
            Ok(bytes) => MaintenanceConfig::from_config_json(path, &bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(MaintenanceConfig::default()),
            Err(source) => Err(MaintenanceConfigError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }
}
