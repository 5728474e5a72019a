//! Session policies: the `sessions` config section (history limits, per-chat-type overrides,
//! retention, reset policies), duration and byte-size parsing, reset-policy resolution and
//! freshness (openclaw-jsonl.md §5.5; OpenClaw 2026.6.11 `resolveSessionResetPolicy`,
//! `evaluateSessionFreshness`, `resolveDailyResetAtMs`, `parseDurationMs`, `parseByteSize`,
//! checked against the reference with `tests/data/session-key-corpus.jsonl`).
//!
//! Reset policies follow OpenClaw 2026.6.11 (the workspace's reference), which differs from
//! the 2026.9.6 text of §5.5: there is no `none` mode, and with nothing configured the policy is
//! `daily` at 04:00 (flagged `configured: false`). A `resetByChannel` entry replaces the base and
//! type entries; a type entry's fields win over the base's one by one.
//!
//! Time is injected: every evaluation takes `now` in milliseconds and a [`chrono::TimeZone`] for
//! the daily boundary, which is computed as JavaScript's `Date#setHours` does (a local time
//! skipped by a DST change is read with the offset before the change; a repeated one resolves to
//! its first occurrence).

use std::collections::BTreeMap;
use std::fmt;

use chrono::{Duration, LocalResult, NaiveDateTime, TimeZone};
use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::js;
use crate::key::{DmScope, IdentityLinks};
use crate::kind::{ChatType, ResetType};

// ---------------------------------------------------------------------------------------------
// Durations and sizes

/// A duration string that does not parse (`parseDurationMs`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: {reason} (use values like 500ms, 30s, 5m, 2h, 30d or 1h30m)")]
pub struct DurationError {
    /// The text given.
    pub input: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// A byte size string that does not parse (`parseByteSize`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid byte size {input:?}: {reason} (use values like 512kb, 10mb, 1gb or 500)")]
pub struct ByteSizeError {
    /// The text given.
    pub input: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// Units of [`parse_duration_ms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationUnit {
    /// Milliseconds (`ms`).
    Millis,
    /// Seconds (`s`).
    Seconds,
    /// Minutes (`m`).
    Minutes,
    /// Hours (`h`).
    Hours,
    /// Days (`d`).
    Days,
}

impl DurationUnit {
    fn millis(self) -> f64 {
        match self {
            DurationUnit::Millis => 1.0,
            DurationUnit::Seconds => 1e3,
            DurationUnit::Minutes => 6e4,
            DurationUnit::Hours => 36e5,
            DurationUnit::Days => 864e5,
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "ms" => DurationUnit::Millis,
            "s" => DurationUnit::Seconds,
            "m" => DurationUnit::Minutes,
            "h" => DurationUnit::Hours,
            "d" => DurationUnit::Days,
            _ => return None,
        })
    }
}

/// `\d+(\.\d+)?` at the start of `s`: its length.
fn number_len(s: &str) -> usize {
    let b = s.as_bytes();
    let int = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if int == 0 {
        return 0;
    }
    if b.get(int) == Some(&b'.') {
        let frac = b[int + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if frac > 0 {
            return int + 1 + frac;
        }
    }
    int
}

/// `Number.isSafeInteger(Math.round(x))` for non-negative `x`.
fn round_safe(x: f64) -> Option<u64> {
    let r = x.round();
    (r.is_finite() && r <= 9_007_199_254_740_991.0).then_some(r as u64)
}

/// `parseDurationMs(raw, {defaultUnit})`: `<number><unit>` or a composite such as `1h30m`
/// (units `ms s m h d`, case-insensitive; a bare number takes `default_unit`), rounded to whole
/// milliseconds.
///
/// # Errors
/// [`DurationError`] for empty or malformed text, a composite segment without a unit, or a
/// result beyond 2^53 − 1 ms.
pub fn parse_duration_ms(raw: &str, default_unit: DurationUnit) -> Result<u64, DurationError> {
    let err = |reason| DurationError {
        input: raw.to_owned(),
        reason,
    };
    let text = js::lower_trim(raw);
    if text.is_empty() {
        return Err(err("empty"));
    }
    let n = number_len(&text);
    if n > 0 {
        let unit = &text[n..];
        let unit = if unit.is_empty() {
            Some(default_unit)
        } else {
            DurationUnit::parse(unit)
        };
        if let Some(unit) = unit {
            let value: f64 = text[..n].parse().map_err(|_| err("not a number"))?;
            return round_safe(value * unit.millis()).ok_or_else(|| err("too large"));
        }
    }
    let mut total = 0.0;
    let mut s = text.as_str();
    while !s.is_empty() {
        let n = number_len(s);
        if n == 0 {
            return Err(err("each composite segment needs a unit"));
        }
        let value: f64 = s[..n].parse().map_err(|_| err("not a number"))?;
        let after = &s[n..];
        let (unit, len) = if after.starts_with("ms") {
            (DurationUnit::Millis, 2)
        } else {
            match after.chars().next() {
                Some(c) => match DurationUnit::parse(c.encode_utf8(&mut [0; 4])) {
                    Some(u) => (u, 1),
                    None => return Err(err("unknown unit")),
                },
                None => return Err(err("each composite segment needs a unit")),
            }
        };
        total += value * unit.millis();
        s = &after[len..];
    }
    round_safe(total).ok_or_else(|| err("too large"))
}

/// A retention age (`sessions.retention.maxAge`, `sessions archive --max-age`) that cannot be
/// used: not a duration, or zero or negative (every session would be older than it, so a sweep
/// would archive them all). `off` and `false` are not ages: they turn the limit off, and the
/// callers read them before parsing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MaxAgeError {
    /// Not a duration ([`parse_duration_ms`]).
    #[error(transparent)]
    Invalid(#[from] DurationError),
    /// Zero: `0`, `0d`, `0s`, `0ms`, or a value that rounds to 0 ms (`0.4ms`).
    #[error(
        "invalid max age {input:?}: a zero age is refused, since every session is older and \
         would be archived; give a positive age such as 30d, or off to turn the limit \
         off"
    )]
    Zero {
        /// The text given.
        input: String,
    },
    /// Negative: a duration with a leading `-` (`-1d`, `-30`).
    #[error(
        "invalid max age {input:?}: a negative age is refused, since every session is older \
         and would be archived; give a positive age such as 30d, or off to turn the \
         limit off"
    )]
    Negative {
        /// The text given.
        input: String,
    },
}

impl MaxAgeError {
    /// The message for the config's `sessions.retention.maxAge`, where the limit is turned off
    /// with `false` (a config refuses `"off"`): as the [`fmt::Display`] text (which is worded
    /// for the `--max-age` flag, where `off` turns it off), with `false` in place of `off`.
    pub fn config_message(&self) -> String {
        let text = self.to_string();
        match self {
            MaxAgeError::Invalid(_) => text,
            _ => text.replace(
                ", or off to turn the limit off",
                ", or false to turn the limit off",
            ),
        }
    }
}

/// A retention age in milliseconds: [`parse_duration_ms`] with days for bare numbers, refusing
/// zero and negative ages (the reference's `parseDurationMs` returns 0 for `0d` and fails on
/// `-1d` as malformed; here both are named for what they are).
///
/// # Errors
/// [`MaxAgeError::Zero`] for an age of 0 ms, [`MaxAgeError::Negative`] for `-` followed by a
/// duration, [`MaxAgeError::Invalid`] for anything else that is not a duration.
pub fn parse_max_age_ms(raw: &str) -> Result<u64, MaxAgeError> {
    let text = js::lower_trim(raw);
    if let Some(rest) = text.strip_prefix('-')
        && let Ok(ms) = parse_duration_ms(rest, DurationUnit::Days)
    {
        return Err(if ms == 0 {
            MaxAgeError::Zero {
                input: raw.to_owned(),
            }
        } else {
            MaxAgeError::Negative {
                input: raw.to_owned(),
            }
        });
    }
    match parse_duration_ms(raw, DurationUnit::Days)? {
        0 => Err(MaxAgeError::Zero {
            input: raw.to_owned(),
        }),
        ms => Ok(ms),
    }
}

/// `parseByteSize(raw, {defaultUnit: "b"})`: `<number>[b|k|kb|m|mb|g|gb|t|tb]`
/// (case-insensitive, binary multiples: `1kb` = 1024), rounded to whole bytes (the same double
/// the reference computes, so sizes beyond 2^53 are as inexact as there).
///
/// # Errors
/// [`ByteSizeError`] for empty or malformed text, an unknown unit, or a size of 2^64 bytes or
/// more (the reference would still return a float).
pub fn parse_byte_size(raw: &str) -> Result<u64, ByteSizeError> {
    let err = |reason| ByteSizeError {
        input: raw.to_owned(),
        reason,
    };
    let text = js::lower_trim(raw);
    if text.is_empty() {
        return Err(err("empty"));
    }
    let n = number_len(&text);
    let unit = &text[n..];
    if n == 0 || !unit.bytes().all(|c| c.is_ascii_lowercase()) {
        return Err(err("not a number with an optional unit"));
    }
    let mult: f64 = match unit {
        "" | "b" => 1.0,
        "k" | "kb" => 1024.0,
        "m" | "mb" => 1024f64.powi(2),
        "g" | "gb" => 1024f64.powi(3),
        "t" | "tb" => 1024f64.powi(4),
        _ => return Err(err("unknown unit")),
    };
    let value: f64 = text[..n].parse().map_err(|_| err("not a number"))?;
    let r = (value * mult).round();
    // Every double below 2^64 that `round` returns is an integer, so the cast is exact.
    (r.is_finite() && r < 18_446_744_073_709_551_616.0)
        .then_some(r as u64)
        .ok_or_else(|| err("too large"))
}

/// A duration setting: the text as written (kept for display) and its milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationSetting {
    /// As written (`"30d"`; a JSON number `30` is kept as `"30"`).
    pub text: String,
    /// Milliseconds.
    pub ms: u64,
}

/// A byte-size setting: the text as written and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeSetting {
    /// As written (`"100mb"`).
    pub text: String,
    /// Bytes.
    pub bytes: u64,
}

/// Reads a duration or size setting as the reference's `normalizeStringifiedOptionalString`
/// does: a string, or a number (its JSON text), or `false` (off, `None`). Anything else (`null`,
/// `true`, an array, an object) is an error naming the key and the accepted types.
struct SettingVisitor {
    /// The key's path, e.g. `sessions.retention.maxAge`.
    key: &'static str,
    /// What a string or number means, e.g. `a duration such as "30d" (a bare number is days)`.
    what: &'static str,
}

impl<'de> serde::de::Visitor<'de> for SettingVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` to be {}, or false to turn it off",
            self.key, self.what
        )
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // The number's JSON text, as `serde_json::Number` prints it (`1.5`, `1e300`).
        serde_json::Number::from_f64(v)
            .map(|n| Some(n.to_string()))
            .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Float(v), &self))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        if v {
            Err(E::invalid_value(serde::de::Unexpected::Bool(true), &self))
        } else {
            Ok(None)
        }
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Err(E::invalid_type(serde::de::Unexpected::Other("null"), &self))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }
}

const MAX_AGE_SETTING: SettingVisitor = SettingVisitor {
    key: "sessions.retention.maxAge",
    what: "a duration: a string such as \"30d\" or \"12h\", or a number of days",
};

const MAX_SIZE_SETTING: SettingVisitor = SettingVisitor {
    key: "sessions.retention.maxSize",
    what: "a byte size: a string such as \"100mb\", or a number of bytes",
};

/// `maxAge`: a positive duration (bare numbers are days; zero and negative ages are refused,
/// see [`parse_max_age_ms`]), or `false` to disable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaxAge(pub Option<DurationSetting>);

/// `maxSize`: a byte size (bare numbers are bytes), or `false` to disable (the default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MaxSize(pub Option<SizeSetting>);

/// The default `sessions.retention.maxAge` (OpenClaw's `pruneAfter` default).
pub const DEFAULT_MAX_AGE: &str = "30d";

impl Default for MaxAge {
    fn default() -> Self {
        MaxAge(Some(DurationSetting {
            text: DEFAULT_MAX_AGE.to_owned(),
            ms: 30 * 86_400_000,
        }))
    }
}

impl<'de> Deserialize<'de> for MaxAge {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Some(text) = d.deserialize_any(MAX_AGE_SETTING)? else {
            return Ok(MaxAge(None));
        };
        let ms =
            parse_max_age_ms(&text).map_err(|e| serde::de::Error::custom(e.config_message()))?;
        Ok(MaxAge(Some(DurationSetting { text, ms })))
    }
}

impl Serialize for MaxAge {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(d) => s.serialize_str(&d.text),
            None => s.serialize_bool(false),
        }
    }
}

impl<'de> Deserialize<'de> for MaxSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Some(text) = d.deserialize_any(MAX_SIZE_SETTING)? else {
            return Ok(MaxSize(None));
        };
        let bytes = parse_byte_size(&text).map_err(serde::de::Error::custom)?;
        Ok(MaxSize(Some(SizeSetting { text, bytes })))
    }
}

impl Serialize for MaxSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(b) => s.serialize_str(&b.text),
            None => s.serialize_bool(false),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Config

/// Reset mode (`session.reset.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResetMode {
    /// Sessions started before the latest `atHour` boundary (local time) are stale.
    Daily,
    /// Sessions idle for more than `idleMinutes` are stale.
    Idle,
}

impl ResetMode {
    /// `daily` or `idle`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetMode::Daily => "daily",
            ResetMode::Idle => "idle",
        }
    }
}

fn de_at_hour<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    let v = Option::<u8>::deserialize(d)?;
    match v {
        Some(h) if h > 23 => Err(serde::de::Error::custom(format!(
            "atHour must be an integer from 0 to 23, got {h}"
        ))),
        v => Ok(v),
    }
}

fn de_positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let v = Option::<u32>::deserialize(d)?;
    match v {
        Some(0) => Err(serde::de::Error::custom(
            "must be a positive integer, got 0",
        )),
        v => Ok(v),
    }
}

fn de_positive_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Option::<u64>::deserialize(d)?;
    match v {
        Some(0) => Err(serde::de::Error::custom(
            "must be a positive integer, got 0",
        )),
        v => Ok(v),
    }
}

/// JSON objects only for the config's sections: serde's derived struct impls also accept an
/// array of the fields in order (`"retention": ["1d", "1b"]` read as maxAge 1d, maxSize 1 byte),
/// which a config must never do. Each section's field deserialises through [`ObjectOnly`], which
/// asks the JSON deserializer for a map, so an array (or any other non-object) is an error at
/// its position naming the key.
mod object_only {
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

    /// A deserializer that reads structs and maps as maps (objects) only, expecting `key` to be
    /// one.
    struct ObjectOnly<D> {
        inner: D,
        key: &'static str,
    }

    /// The struct's visitor with an `expecting` text that names the key.
    struct Expecting<V> {
        inner: V,
        key: &'static str,
    }

    impl<'de, V: Visitor<'de>> Visitor<'de> for Expecting<V> {
        type Value = V::Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "`{}` to be an object", self.key)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            self.inner.visit_map(map)
        }
    }

    impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
        type Error = D::Error;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.inner.deserialize_any(visitor)
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            _fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.inner.deserialize_map(Expecting {
                inner: visitor,
                key: self.key,
            })
        }

        fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.inner.deserialize_map(Expecting {
                inner: visitor,
                key: self.key,
            })
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct enum identifier
            ignored_any
        }
    }

    /// A struct `T` read from an object only.
    pub(super) fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
        key: &'static str,
    ) -> Result<T, D::Error> {
        T::deserialize(ObjectOnly { inner: d, key })
    }

    /// `null` or a missing key is `None`; anything else must be an object.
    pub(super) fn optional<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
        key: &'static str,
    ) -> Result<Option<T>, D::Error> {
        struct Opt<T>(&'static str, PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Opt<T> {
            type Value = Option<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "`{}` to be an object", self.0)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                object(d, self.0).map(Some)
            }
        }
        d.deserialize_option(Opt(key, PhantomData))
    }

    /// An object whose values are objects (`resetByChannel`); `null` is `None`.
    pub(super) fn optional_map_of<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
        key: &'static str,
    ) -> Result<Option<BTreeMap<String, T>>, D::Error> {
        Ok(optional::<D, ObjectMap<T>>(d, key)?.map(|ObjectMap(m)| m))
    }

    /// A map read through [`ObjectOnly`] (so from an object only), each value read as an object
    /// named after the map's key.
    struct ObjectMap<T>(BTreeMap<String, T>);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectMap<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            /// Each value is read as an object named after the map's key.
            struct Entry<T>(T);
            impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entry<T> {
                fn deserialize<D2: Deserializer<'de>>(d: D2) -> Result<Self, D2::Error> {
                    object(d, "each sessions.resetByChannel entry").map(Entry)
                }
            }
            struct Entries<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
                type Value = ObjectMap<T>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut out = BTreeMap::new();
                    while let Some((k, Entry(v))) = map.next_entry::<String, Entry<T>>()? {
                        out.insert(k, v);
                    }
                    Ok(ObjectMap(out))
                }
            }
            d.deserialize_map(Entries(PhantomData))
        }
    }
}

macro_rules! object_fields {
    ($($name:ident: $kind:ident $ty:ty = $key:literal;)*) => {
        $(
            fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                object_only::$kind(d, $key)
            }
        )*
    };
}

object_fields! {
    de_sessions: object SessionsConfig = "sessions";
    de_channel_overrides: object ChannelOverrides = "sessions.channelOverrides";
    de_retention: object RetentionConfig = "sessions.retention";
    de_reset: optional Option<ResetConfig> = "sessions.reset";
    de_reset_by_type: optional Option<ResetByType> = "sessions.resetByType";
    de_reset_by_type_entry: optional Option<ResetConfig> = "a sessions.resetByType entry";
    de_history_override: optional Option<HistoryOverride> = "a sessions.channelOverrides entry";
    de_reset_by_channel: optional_map_of Option<BTreeMap<String, ResetConfig>> = "sessions.resetByChannel";
}

/// One reset policy entry (`{mode?, atHour?, idleMinutes?}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetConfig {
    /// `daily` or `idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ResetMode>,
    /// Hour of the daily boundary, 0–23 (default 4).
    #[serde(
        default,
        deserialize_with = "de_at_hour",
        skip_serializing_if = "Option::is_none"
    )]
    pub at_hour: Option<u8>,
    /// Idle timeout in minutes (positive).
    #[serde(
        default,
        deserialize_with = "de_positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub idle_minutes: Option<u32>,
}

/// `resetByType`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetByType {
    /// Direct conversations.
    #[serde(
        default,
        deserialize_with = "de_reset_by_type_entry",
        skip_serializing_if = "Option::is_none"
    )]
    pub direct: Option<ResetConfig>,
    /// Deprecated spelling of `direct` (used when `direct` is absent).
    #[serde(
        default,
        deserialize_with = "de_reset_by_type_entry",
        skip_serializing_if = "Option::is_none"
    )]
    pub dm: Option<ResetConfig>,
    /// Group and channel conversations.
    #[serde(
        default,
        deserialize_with = "de_reset_by_type_entry",
        skip_serializing_if = "Option::is_none"
    )]
    pub group: Option<ResetConfig>,
    /// Threads.
    #[serde(
        default,
        deserialize_with = "de_reset_by_type_entry",
        skip_serializing_if = "Option::is_none"
    )]
    pub thread: Option<ResetConfig>,
}

/// History limits of one chat type (`channelOverrides.dm` / `.group`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryOverride {
    /// Most messages kept in the model's history.
    #[serde(
        default,
        deserialize_with = "de_positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_history_messages: Option<u32>,
    /// Most tokens kept in the model's history.
    #[serde(
        default,
        deserialize_with = "de_positive_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_history_tokens: Option<u64>,
}

/// `channelOverrides`: history limits for direct (`dm`) and group/channel (`group`) chats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelOverrides {
    /// Direct conversations.
    #[serde(
        default,
        deserialize_with = "de_history_override",
        skip_serializing_if = "Option::is_none"
    )]
    pub dm: Option<HistoryOverride>,
    /// Group and channel conversations.
    #[serde(
        default,
        deserialize_with = "de_history_override",
        skip_serializing_if = "Option::is_none"
    )]
    pub group: Option<HistoryOverride>,
}

/// `retention`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetentionConfig {
    /// Sessions whose last activity is older than this are archived (default `30d`; `false`
    /// disables).
    #[serde(default)]
    pub max_age: MaxAge,
    /// When the live sessions of an agent take more than this, the oldest are archived until
    /// they fit (default: no limit).
    #[serde(default)]
    pub max_size: MaxSize,
}

/// The `sessions` config section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsConfig {
    /// Most messages kept in the model's history (default: no limit).
    #[serde(
        default,
        deserialize_with = "de_positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_history_messages: Option<u32>,
    /// Most tokens kept in the model's history (default: no limit).
    #[serde(
        default,
        deserialize_with = "de_positive_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_history_tokens: Option<u64>,
    /// Per-chat-type history limits.
    #[serde(default, deserialize_with = "de_channel_overrides")]
    pub channel_overrides: ChannelOverrides,
    /// Archiving of old and surplus sessions.
    #[serde(default, deserialize_with = "de_retention")]
    pub retention: RetentionConfig,
    /// Base reset policy.
    #[serde(
        default,
        deserialize_with = "de_reset",
        skip_serializing_if = "Option::is_none"
    )]
    pub reset: Option<ResetConfig>,
    /// Reset policy per reset type.
    #[serde(
        default,
        deserialize_with = "de_reset_by_type",
        skip_serializing_if = "Option::is_none"
    )]
    pub reset_by_type: Option<ResetByType>,
    /// Reset policy per channel (replaces base and type policies).
    #[serde(
        default,
        deserialize_with = "de_reset_by_channel",
        skip_serializing_if = "Option::is_none"
    )]
    pub reset_by_channel: Option<BTreeMap<String, ResetConfig>>,
    /// Legacy idle timeout (used when no `reset`/`resetByType` is configured).
    #[serde(
        default,
        deserialize_with = "de_positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub idle_minutes: Option<u32>,
    /// The main session key (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_key: Option<String>,
    /// How DMs are keyed (default `main`).
    #[serde(default)]
    pub dm_scope: DmScope,
    /// Linked peer ids per canonical name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub identity_links: IdentityLinks,
}

/// A config document: `{"sessions": {...}}`. Other top-level keys are ignored; unknown keys
/// inside `sessions` are errors (typos never pass silently).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The sessions section.
    #[serde(default, deserialize_with = "de_sessions")]
    pub sessions: SessionsConfig,
}

/// A config document that does not parse: what is wrong and where, as
/// `invalid sessions config: <message> at line <l>, column <c> (byte offset <b>)`.
#[derive(Debug, thiserror::Error)]
#[error(
    "invalid sessions config: {message} at line {line}, column {column} (byte offset {byte_offset})"
)]
pub struct ConfigError {
    /// What is wrong (the JSON or validation error without its position).
    pub message: String,
    /// 1-based line of the error.
    pub line: usize,
    /// 1-based column of the error in that line, counted in bytes.
    pub column: usize,
    /// 0-based byte offset of the error in the document as given (a leading BOM counted).
    pub byte_offset: usize,
    /// The JSON or validation error.
    #[source]
    pub source: serde_json::Error,
}

impl ConfigError {
    /// `source` positioned in `text`, whose first `skipped` bytes (a BOM) were not parsed.
    fn new(source: serde_json::Error, text: &str, skipped: usize) -> Self {
        let full = source.to_string();
        let suffix = format!(" at line {} column {}", source.line(), source.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
        let parsed = &text.as_bytes()[skipped..];
        let line = source.line().max(1);
        // serde_json's column counts the bytes of the line up to and including the one at
        // fault (0 at the very start of a line).
        let line_start = if line == 1 {
            0
        } else {
            parsed
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(line - 2)
                .map_or(parsed.len(), |(i, _)| i + 1)
        };
        let in_line = source.column().saturating_sub(1);
        let byte_offset = (line_start + in_line).min(parsed.len().saturating_sub(1)) + skipped;
        let column = if line == 1 {
            in_line + skipped + 1
        } else {
            in_line + 1
        };
        ConfigError {
            message,
            line,
            column,
            byte_offset,
            source,
        }
    }
}

impl Config {
    /// Parses a JSON config document (a leading UTF-8 byte-order mark is skipped, as editors
    /// on some systems write one). Every section (`sessions`, `retention`, `channelOverrides`,
    /// `reset`, …) must be a JSON object: an array is refused, where serde would read its
    /// elements as the fields in order.
    ///
    /// # Errors
    /// [`ConfigError`] with the line, column and byte offset for malformed JSON, a section that
    /// is not an object, unknown keys inside `sessions`, or invalid values (e.g. `atHour: 24`,
    /// `maxAge: "30x"`, `maxAge: null`).
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let skipped = text.len() - body.len();
        let parse = || -> Result<Self, serde_json::Error> {
            let mut de = serde_json::Deserializer::from_str(body);
            let config = object_only::object(&mut de, "the config document")?;
            de.end()?;
            Ok(config)
        };
        parse().map_err(|e| ConfigError::new(e, text, skipped))
    }
}

// ---------------------------------------------------------------------------------------------
// History limits

/// The history limits that apply to one chat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryLimits {
    /// Most messages (`None`: no limit).
    pub max_messages: Option<u32>,
    /// Most tokens (`None`: no limit).
    pub max_tokens: Option<u64>,
}

impl HistoryLimits {
    /// The index of the first message to keep, given the token counts of the messages in
    /// order: the longest suffix within both limits. The newest message is always kept, even
    /// when it alone exceeds the token limit.
    pub fn keep_from(&self, token_counts: &[u64]) -> usize {
        let mut start = token_counts.len();
        let mut tokens: u64 = 0;
        for (i, &t) in token_counts.iter().enumerate().rev() {
            let kept = token_counts.len() - i;
            let within_messages = self.max_messages.is_none_or(|m| kept <= m as usize);
            let within_tokens = self
                .max_tokens
                .is_none_or(|m| tokens.saturating_add(t) <= m);
            if kept > 1 && !(within_messages && within_tokens) {
                break;
            }
            tokens = tokens.saturating_add(t);
            start = i;
        }
        start
    }
}

impl SessionsConfig {
    /// The history limits for a chat type: `channelOverrides.dm` for direct chats,
    /// `channelOverrides.group` for group and channel chats, field by field over the base
    /// `maxHistoryMessages`/`maxHistoryTokens`.
    pub fn history_limits(&self, chat_type: ChatType) -> HistoryLimits {
        let o = match chat_type {
            ChatType::Direct => self.channel_overrides.dm,
            ChatType::Group | ChatType::Channel => self.channel_overrides.group,
            ChatType::Unknown => None,
        }
        .unwrap_or_default();
        HistoryLimits {
            max_messages: o.max_history_messages.or(self.max_history_messages),
            max_tokens: o.max_history_tokens.or(self.max_history_tokens),
        }
    }

    /// The `resetByChannel` entry for a channel (`resolveChannelResetConfig`): looked up by the
    /// channel's canonical id (aliases such as `teams` → `msteams` resolved), else by the
    /// trimmed, lowercased name.
    pub fn channel_reset(&self, channel: &str) -> Option<ResetConfig> {
        let map = self.reset_by_channel.as_ref()?;
        let key = normalize_channel(channel)?;
        map.get(&key).copied()
    }

    /// The effective reset policy for a reset type and (optionally) a channel
    /// (`resolveSessionResetPolicy` with `resolveChannelResetConfig`).
    pub fn reset_policy(&self, reset_type: ResetType, channel: Option<&str>) -> ResetPolicy {
        let override_ = channel.and_then(|c| self.channel_reset(c));
        resolve_reset_policy(self, reset_type, override_)
    }
}

/// Built-in channel aliases of OpenClaw 2026.6.11 (alias → channel id).
const CHANNEL_ALIASES: &[(&str, &str)] = &[
    ("lark", "feishu"),
    ("gchat", "googlechat"),
    ("google-chat", "googlechat"),
    ("imsg", "imessage"),
    ("internet-relay-chat", "irc"),
    ("teams", "msteams"),
    ("nc", "nextcloud-talk"),
    ("nc-talk", "nextcloud-talk"),
    ("twitch-chat", "twitch"),
    ("zl", "zalo"),
    ("zlu", "zalouser"),
];

/// `normalizeMessageChannel` for the built-in channels: trimmed, lowercased, aliases resolved;
/// `None` when blank.
pub fn normalize_channel(channel: &str) -> Option<String> {
    let c = js::lower_trim(channel);
    if c.is_empty() {
        return None;
    }
    Some(
        CHANNEL_ALIASES
            .iter()
            .find(|(alias, _)| *alias == c)
            .map_or(c, |(_, id)| (*id).to_owned()),
    )
}

// ---------------------------------------------------------------------------------------------
// Reset policy and freshness

/// The default hour of the daily boundary.
pub const DEFAULT_RESET_AT_HOUR: u8 = 4;

/// A resolved reset policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetPolicy {
    /// The mode.
    pub mode: ResetMode,
    /// Hour of the daily boundary (local time).
    pub at_hour: u8,
    /// Idle timeout in minutes (`Some(0)` for idle mode without minutes: never idle-stale).
    pub idle_minutes: Option<u32>,
    /// True when any reset setting applied (false: the built-in daily default).
    pub configured: bool,
}

/// `resolveSessionResetPolicy`: with a channel override, it alone is used; otherwise the type
/// entry (`resetByType.<type>`, `dm` for direct when `direct` is absent) over the base
/// (`reset`), field by field; the legacy `idleMinutes` applies when neither `reset` nor
/// `resetByType` exists (and then makes the mode `idle`). The mode defaults to `daily`, the
/// hour to 4; idle mode without minutes gives 0.
pub fn resolve_reset_policy(
    cfg: &SessionsConfig,
    reset_type: ResetType,
    channel_override: Option<ResetConfig>,
) -> ResetPolicy {
    let base = channel_override.or(cfg.reset);
    let type_reset = if channel_override.is_some() {
        None
    } else {
        cfg.reset_by_type.and_then(|t| match reset_type {
            ResetType::Direct => t.direct.or(t.dm),
            ResetType::Group => t.group,
            ResetType::Thread => t.thread,
        })
    };
    let has_explicit = base.is_some() || cfg.reset_by_type.is_some();
    let legacy_idle = if channel_override.is_some() {
        None
    } else {
        cfg.idle_minutes
    };
    let configured = base.is_some() || type_reset.is_some() || legacy_idle.is_some();
    let mode = type_reset
        .and_then(|t| t.mode)
        .or(base.and_then(|b| b.mode))
        .unwrap_or(if !has_explicit && legacy_idle.is_some() {
            ResetMode::Idle
        } else {
            ResetMode::Daily
        });
    let at_hour = type_reset
        .and_then(|t| t.at_hour)
        .or(base.and_then(|b| b.at_hour))
        .unwrap_or(DEFAULT_RESET_AT_HOUR);
    let idle_raw = type_reset
        .and_then(|t| t.idle_minutes)
        .or(base.and_then(|b| b.idle_minutes))
        .or(legacy_idle);
    let idle_minutes = match idle_raw {
        Some(m) => Some(m),
        None if mode == ResetMode::Idle => Some(0),
        None => None,
    };
    ResetPolicy {
        mode,
        at_hour,
        idle_minutes,
        configured,
    }
}

/// Why a session is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StaleReason {
    /// The daily boundary passed after the session started.
    Daily,
    /// The idle timeout expired.
    Idle,
}

/// The timestamps freshness reads (milliseconds since the epoch; a negative, non-finite or
/// future value counts as absent).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SessionTimes {
    /// `updatedAt` (absent → 0).
    pub updated_at: Option<f64>,
    /// When the session started (default: `updated_at`).
    pub session_started_at: Option<f64>,
    /// The last interaction (default: the start).
    pub last_interaction_at: Option<f64>,
}

/// The result of [`evaluate_freshness`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Freshness {
    /// True when neither boundary has passed.
    pub fresh: bool,
    /// The latest daily boundary (daily mode only).
    pub daily_reset_at: Option<i64>,
    /// When the idle timeout expires (positive idle minutes only).
    pub idle_expires_at: Option<f64>,
    /// Why the session is stale: when both apply, the earlier boundary (daily on a tie).
    pub stale_reason: Option<StaleReason>,
}

/// JavaScript's `UTC(t)` for a local date-time: a repeated local time resolves to its first
/// occurrence; a skipped one is read with the offset in force before the change.
fn local_to_utc_ms<Tz: TimeZone>(tz: &Tz, local: NaiveDateTime) -> i64 {
    let resolve = |dt: NaiveDateTime| match tz.from_local_datetime(&dt) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Some(t),
        LocalResult::None => None,
    };
    if let Some(t) = resolve(local) {
        return t.timestamp_millis();
    }
    let local_ms = local.and_utc().timestamp_millis();
    let before = local - Duration::days(1);
    let offset_ms = match tz.from_local_datetime(&before) {
        LocalResult::Single(t) | LocalResult::Ambiguous(_, t) => {
            t.naive_local().and_utc().timestamp_millis() - t.timestamp_millis()
        }
        LocalResult::None => 0,
    };
    local_ms - offset_ms
}

/// `resolveDailyResetAtMs(now, atHour)`: today's `atHour:00` local time, or the day before's
/// when that is still ahead of `now` (computed as `Date#setHours` and `Date#setDate` do).
pub fn daily_reset_at<Tz: TimeZone>(now_ms: i64, at_hour: u8, tz: &Tz) -> i64 {
    let hour = u32::from(at_hour.min(23));
    let local_now = match tz.timestamp_millis_opt(now_ms) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t.naive_local(),
        LocalResult::None => return now_ms,
    };
    let Some(candidate) = local_now.date().and_hms_opt(hour, 0, 0) else {
        return now_ms;
    };
    let mut reset = local_to_utc_ms(tz, candidate);
    if now_ms < reset {
        let reset_local = match tz.timestamp_millis_opt(reset) {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t.naive_local(),
            LocalResult::None => return reset,
        };
        let prev = reset_local - Duration::days(1);
        reset = local_to_utc_ms(tz, prev);
    }
    reset
}

fn valid_time(v: Option<f64>, now: f64) -> Option<f64> {
    v.filter(|t| t.is_finite() && *t >= 0.0 && *t <= now)
}

/// `evaluateSessionFreshness`: daily mode is stale when the session started before the latest
/// boundary; a positive idle timeout is stale when `now` is past the last interaction plus the
/// timeout; both may apply whatever the mode.
pub fn evaluate_freshness<Tz: TimeZone>(
    times: &SessionTimes,
    now_ms: i64,
    policy: &ResetPolicy,
    tz: &Tz,
) -> Freshness {
    let now = now_ms as f64;
    let updated = valid_time(times.updated_at, now).unwrap_or(0.0);
    let started = valid_time(times.session_started_at, now).unwrap_or(updated);
    let last = valid_time(times.last_interaction_at, now).unwrap_or(started);
    let daily_reset_at =
        (policy.mode == ResetMode::Daily).then(|| daily_reset_at(now_ms, policy.at_hour, tz));
    let idle_expires_at = policy
        .idle_minutes
        .filter(|m| *m > 0)
        .map(|m| last + f64::from(m) * 6e4);
    let stale_daily = daily_reset_at.is_some_and(|d| started < d as f64);
    let stale_idle = idle_expires_at.is_some_and(|i| now > i);
    let stale_reason = match (stale_daily, stale_idle) {
        (true, true) => {
            let d = daily_reset_at.map_or(f64::INFINITY, |d| d as f64);
            let i = idle_expires_at.unwrap_or(f64::INFINITY);
            Some(if d <= i {
                StaleReason::Daily
            } else {
                StaleReason::Idle
            })
        }
        (false, true) => Some(StaleReason::Idle),
        (true, false) => Some(StaleReason::Daily),
        (false, false) => None,
    };
    Freshness {
        fresh: !(stale_daily || stale_idle),
        daily_reset_at,
        idle_expires_at,
        stale_reason,
    }
}

/// A clock in milliseconds since the epoch (injected so evaluations are deterministic).
pub trait Clock {
    /// Now.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        session_format::ids::now_ms()
    }
}

/// A clock that always says the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedClock(pub i64);

impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

impl fmt::Display for ResetPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            ResetMode::Daily => write!(f, "daily at {:02}:00", self.at_hour)?,
            ResetMode::Idle => f.write_str("idle")?,
        }
        if let Some(m) = self.idle_minutes.filter(|m| *m > 0) {
            write!(f, ", idle after {m} min")?;
        }
        if !self.configured {
            f.write_str(" (default)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes() {
        let d = |s| parse_duration_ms(s, DurationUnit::Days);
        assert_eq!(d("30d"), Ok(2_592_000_000));
        assert_eq!(d(" 1H30M "), Ok(5_400_000));
        assert_eq!(d("30"), Ok(2_592_000_000));
        assert_eq!(d("1.5h"), Ok(5_400_000));
        assert_eq!(d("500ms"), Ok(500));
        assert!(d("1h30").is_err());
        assert!(d("").is_err());
        assert!(d("-1d").is_err());
        assert_eq!(parse_byte_size("100mb"), Ok(104_857_600));
        assert_eq!(parse_byte_size("1.5K"), Ok(1536));
        assert_eq!(parse_byte_size("500"), Ok(500));
        assert!(parse_byte_size("10xb").is_err());
        assert!(parse_byte_size("1 mb").is_err());
    }

    #[test]
    fn config_defaults_and_validation() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(
            c.sessions.retention.max_age.0.as_ref().map(|d| d.ms),
            Some(2_592_000_000)
        );
        assert_eq!(c.sessions.retention.max_size.0, None);
        let c = Config::from_json(
            r#"{"sessions":{"retention":{"maxAge":false,"maxSize":"100mb"},"maxHistoryMessages":50,
               "channelOverrides":{"group":{"maxHistoryMessages":20}}}}"#,
        )
        .unwrap();
        assert_eq!(c.sessions.retention.max_age.0, None);
        assert_eq!(
            c.sessions.retention.max_size.0.as_ref().map(|s| s.bytes),
            Some(104_857_600)
        );
        assert_eq!(
            c.sessions.history_limits(ChatType::Channel),
            HistoryLimits {
                max_messages: Some(20),
                max_tokens: None
            }
        );
        assert_eq!(
            c.sessions.history_limits(ChatType::Direct).max_messages,
            Some(50)
        );
        for bad in [
            r#"{"sessions":{"reset":{"atHour":24}}}"#,
            r#"{"sessions":{"reset":{"mode":"none"}}}"#,
            r#"{"sessions":{"retention":{"maxAge":"30x"}}}"#,
            r#"{"sessions":{"maxHistoryMessage":3}}"#,
            r#"{"sessions":{"maxHistoryMessages":0}}"#,
        ] {
            assert!(Config::from_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn history_window() {
        let l = HistoryLimits {
            max_messages: Some(3),
            max_tokens: Some(100),
        };
        assert_eq!(l.keep_from(&[10, 10, 10, 10]), 1);
        assert_eq!(l.keep_from(&[10, 60, 50]), 2);
        assert_eq!(l.keep_from(&[500]), 0);
        assert_eq!(l.keep_from(&[]), 0);
        assert_eq!(HistoryLimits::default().keep_from(&[1, 2]), 0);
    }
}
