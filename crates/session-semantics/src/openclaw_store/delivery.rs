//! Re-deriving a store entry's delivery fields on load and save (openclaw-store.md R2.14): the
//! reference reconciles `route`, `deliveryContext` and the legacy `lastChannel`, `lastTo`,
//! `lastAccountId`, `lastThreadId` (with `channel` as the fallback channel) into one delivery
//! target, and replaces all of them when the result differs from what the entry holds; it
//! also coerces the pending-delivery fields to their types.
//!
//! Channel names are lowercased and the bundled channels' aliases mapped to their ids
//! (`lark` → `feishu`, `teams` → `msteams`, …); channel plugins, which the reference may also
//! consult for aliases, are not known here, so a plugin's alias stays as written.

use session_format::json::{JsObject, JsString, JsValue};

/// Channels that never deliver (`INTERNAL_NON_DELIVERY_CHANNELS`).
const INTERNAL_NON_DELIVERY: &[&str] = &["heartbeat", "cron", "webhook", "voice", "sessions_send"];

fn get<'a>(value: Option<&'a JsValue>, key: &str) -> Option<&'a JsValue> {
    value?.as_object()?.get(key)
}

/// JavaScript's `a ?? b` on optional values.
fn coalesce(a: Option<JsValue>, b: Option<JsValue>) -> Option<JsValue> {
    a.filter(|v| !v.is_null()).or(b)
}

fn string(text: &str) -> JsValue {
    JsValue::String(JsString::new(text))
}

/// `normalizeOptionalString`: a string, trimmed, non-empty.
fn trimmed(value: Option<&JsValue>) -> Option<String> {
    let text = value?.as_js_string()?.to_str_lossy().into_owned();
    let t = session_format::js::trim(&text);
    (!t.is_empty()).then(|| t.to_owned())
}

/// `normalizeOptionalThreadValue`: a finite number truncated, or a trimmed non-empty string.
fn thread_value(value: Option<&JsValue>) -> Option<JsValue> {
    match value? {
        JsValue::Number(n) if n.is_finite() => Some(JsValue::Number(n.trunc() + 0.0)),
        JsValue::Number(_) => None,
        other => trimmed(Some(other)).map(|s| string(&s)),
    }
}

/// `normalizeOptionalAccountId`: trimmed; an id of `[a-z0-9][a-z0-9_-]{0,63}` (any case)
/// lowercased, anything else lowercased with runs of other characters turned into `-`, outer
/// dashes removed, cut to 64; empty, `__proto__`, `prototype` and `constructor` are none.
fn account_id(value: &str) -> Option<String> {
    let t = session_format::js::trim(value);
    if t.is_empty() {
        return None;
    }
    let canonical = crate::key::canonicalize_id(t);
    (!canonical.is_empty()
        && !["__proto__", "prototype", "constructor"].contains(&canonical.as_str()))
    .then_some(canonical)
}

/// `normalizeMessageChannel`: lowercased and trimmed, aliases mapped to the channel id
/// ([`crate::policy::normalize_channel`]).
fn message_channel(raw: &str) -> Option<String> {
    crate::policy::normalize_channel(raw)
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Target {
    to: String,
    raw_to: Option<String>,
    chat_type: Option<JsValue>,
}

#[derive(Clone, Debug, PartialEq)]
struct Thread {
    id: JsValue,
    kind: Option<JsValue>,
    source: Option<JsValue>,
}

/// A normalised channel route (`ChannelRouteRef`).
#[derive(Clone, Debug, Default, PartialEq)]
struct Route {
    channel: Option<String>,
    account: Option<String>,
    target: Option<Target>,
    thread: Option<Thread>,
}

/// The loose input of `normalizeChannelRouteRef`.
#[derive(Clone, Debug, Default)]
struct RouteIn {
    channel: Option<JsValue>,
    to: Option<JsValue>,
    raw_to: Option<JsValue>,
    chat_type: Option<JsValue>,
    account: Option<JsValue>,
    thread: Option<JsValue>,
    thread_kind: Option<JsValue>,
    thread_source: Option<JsValue>,
}

fn truthy(v: Option<JsValue>) -> Option<JsValue> {
    v.filter(JsValue::is_truthy)
}

/// `normalizeChannelRouteRef`.
fn route_ref(input: RouteIn) -> Option<Route> {
    let channel = trimmed(input.channel.as_ref()).map(|c| c.to_lowercase());
    let account = match &input.account {
        Some(JsValue::String(s)) => account_id(&s.to_str_lossy()),
        _ => None,
    };
    let to = trimmed(input.to.as_ref());
    let raw_to = trimmed(input.raw_to.as_ref());
    let thread = thread_value(input.thread.as_ref());
    if channel.is_none() && to.is_none() && account.is_none() && thread.is_none() {
        return None;
    }
    Some(Route {
        channel,
        account,
        target: to.map(|to| Target {
            raw_to: raw_to.filter(|r| *r != to),
            chat_type: truthy(input.chat_type),
            to,
        }),
        thread: thread.map(|id| Thread {
            id,
            kind: truthy(input.thread_kind),
            source: truthy(input.thread_source),
        }),
    })
}

/// A normalised delivery context (`DeliveryContext`).
#[derive(Clone, Debug, Default, PartialEq)]
struct Delivery {
    channel: Option<String>,
    to: Option<String>,
    account: Option<String>,
    thread: Option<JsValue>,
}

/// `normalizeDeliveryContext` of loose fields.
fn delivery(
    channel: Option<&JsValue>,
    to: Option<&JsValue>,
    account: Option<&JsValue>,
    thread: Option<&JsValue>,
) -> Option<Delivery> {
    let channel = match channel {
        Some(JsValue::String(s)) => {
            let text = s.to_str_lossy();
            Some(string(&message_channel(&text).unwrap_or_else(|| {
                session_format::js::trim(&text).to_owned()
            })))
        }
        _ => None,
    };
    let route = route_ref(RouteIn {
        channel,
        to: to.cloned(),
        account: account.cloned(),
        thread: thread.cloned(),
        ..RouteIn::default()
    })?;
    Some(Delivery {
        channel: route.channel,
        to: route.target.map(|t| t.to),
        account: route.account.as_deref().and_then(account_id),
        thread: route.thread.map(|t| t.id),
    })
}

fn opt_str(v: &Option<String>) -> Option<JsValue> {
    v.as_deref().map(string)
}

/// `normalizeDeliveryContext` of an already typed context.
fn renormalise(d: Option<&Delivery>) -> Option<Delivery> {
    let d = d?;
    delivery(
        opt_str(&d.channel).as_ref(),
        opt_str(&d.to).as_ref(),
        opt_str(&d.account).as_ref(),
        d.thread.as_ref(),
    )
}

/// `normalizeDeliveryContext` of a stored object (`deliveryContext`): `None` for a missing or
/// falsy value; the fields of an object otherwise.
fn delivery_of(value: Option<&JsValue>) -> Option<Delivery> {
    if !value?.is_truthy() {
        return None;
    }
    delivery(
        get(value, "channel"),
        get(value, "to"),
        get(value, "accountId"),
        get(value, "threadId"),
    )
}

/// `mergeDeliveryContext(primary, fallback)`.
fn merge(primary: Option<&Delivery>, fallback: Option<&Delivery>) -> Option<Delivery> {
    let p = renormalise(primary);
    let f = renormalise(fallback);
    if p.is_none() && f.is_none() {
        return None;
    }
    let conflict = matches!((&p, &f), (Some(Delivery { channel: Some(a), .. }), Some(Delivery { channel: Some(b), .. })) if a != b);
    let pick = |pv: Option<String>, fv: Option<String>| if conflict { pv } else { pv.or(fv) };
    let (p, f) = (p.unwrap_or_default(), f.unwrap_or_default());
    let thread = if conflict {
        p.thread.clone()
    } else {
        p.thread.clone().or(f.thread.clone())
    };
    delivery(
        opt_str(&p.channel.clone().or(f.channel.clone())).as_ref(),
        opt_str(&pick(p.to, f.to)).as_ref(),
        opt_str(&pick(p.account, f.account)).as_ref(),
        thread.as_ref(),
    )
}

fn is_internal(d: Option<&Delivery>) -> bool {
    d.and_then(|d| d.channel.as_deref())
        .is_some_and(|c| c == "webchat" || INTERNAL_NON_DELIVERY.contains(&c))
}

fn has_external_target(d: Option<&Delivery>) -> bool {
    let Some(d) = d else {
        return false;
    };
    let channel = d.channel.as_deref().and_then(message_channel);
    channel.as_deref().is_some_and(|c| {
        !INTERNAL_NON_DELIVERY.contains(&c) && c != "webchat" && Some(c) == d.channel.as_deref()
    }) && d.to.is_some()
}

/// `mergeExternalDeliveryContextOverInternalRoute`.
fn external_over_internal(d: Option<&Delivery>, internal: Option<&Delivery>) -> Option<Delivery> {
    let d = d.cloned().unwrap_or_default();
    let i = internal.cloned().unwrap_or_default();
    delivery(
        opt_str(&d.channel).as_ref(),
        opt_str(&d.to).as_ref(),
        opt_str(&d.account.or(i.account)).as_ref(),
        d.thread.or(i.thread).as_ref(),
    )
}

/// `normalizeDeliveryChannelRoute` of a stored `route`.
fn route_of(value: Option<&JsValue>) -> Option<Route> {
    let v = value?;
    v.as_object()?;
    let target = get(Some(v), "target");
    let thread = get(Some(v), "thread");
    route_ref(RouteIn {
        channel: get(Some(v), "channel").cloned(),
        to: get(target, "to").cloned(),
        raw_to: get(target, "rawTo").cloned(),
        chat_type: get(target, "chatType").cloned(),
        account: get(Some(v), "accountId").cloned(),
        thread: get(thread, "id").cloned(),
        thread_kind: get(thread, "kind").cloned(),
        thread_source: get(thread, "source").cloned(),
    })
}

/// `deliveryContextFromChannelRoute`.
fn delivery_of_route(route: Option<&Route>) -> Option<Delivery> {
    let r = route.cloned().unwrap_or_default();
    delivery(
        opt_str(&r.channel).as_ref(),
        opt_str(&r.target.map(|t| t.to)).as_ref(),
        opt_str(&r.account).as_ref(),
        r.thread.map(|t| t.id).as_ref(),
    )
}

/// `mergeRouteMetadataWithDeliveryContext(route, merged)`.
fn route_with(route: Option<&Route>, d: &Delivery) -> Option<Route> {
    let Some(r) = route else {
        return route_ref(RouteIn {
            channel: opt_str(&d.channel),
            to: opt_str(&d.to),
            account: opt_str(&d.account),
            thread: d.thread.clone(),
            ..RouteIn::default()
        });
    };
    let target = r.target.clone();
    let thread = r.thread.clone();
    route_ref(RouteIn {
        channel: opt_str(&r.channel.clone().or(d.channel.clone())),
        to: opt_str(&target.as_ref().map(|t| t.to.clone()).or(d.to.clone())),
        raw_to: opt_str(&target.as_ref().and_then(|t| t.raw_to.clone())),
        chat_type: target.and_then(|t| t.chat_type),
        account: opt_str(&r.account.clone().or(d.account.clone())),
        thread: thread.as_ref().map(|t| t.id.clone()).or(d.thread.clone()),
        thread_kind: thread.as_ref().and_then(|t| t.kind.clone()),
        thread_source: thread.and_then(|t| t.source),
    })
}

fn route_json(r: &Route) -> JsValue {
    let mut o = JsObject::new();
    if let Some(c) = &r.channel {
        o.insert("channel", string(c));
    }
    if let Some(a) = &r.account {
        o.insert("accountId", string(a));
    }
    if let Some(t) = &r.target {
        let mut to = JsObject::new();
        to.insert("to", string(&t.to));
        if let Some(raw) = &t.raw_to {
            to.insert("rawTo", string(raw));
        }
        if let Some(c) = &t.chat_type {
            to.insert("chatType", c.clone());
        }
        o.insert("target", JsValue::Object(to));
    }
    if let Some(t) = &r.thread {
        let mut th = JsObject::new();
        th.insert("id", t.id.clone());
        if let Some(k) = &t.kind {
            th.insert("kind", k.clone());
        }
        if let Some(s) = &t.source {
            th.insert("source", s.clone());
        }
        o.insert("thread", JsValue::Object(th));
    }
    JsValue::Object(o)
}

fn delivery_json(d: &Delivery) -> JsValue {
    let mut o = JsObject::new();
    for (k, v) in [
        ("channel", opt_str(&d.channel)),
        ("to", opt_str(&d.to)),
        ("accountId", opt_str(&d.account)),
        ("threadId", d.thread.clone()),
    ] {
        if let Some(v) = v {
            o.insert(k, v);
        }
    }
    JsValue::Object(o)
}

/// JavaScript `===` of two optional primitives (objects are never equal to a fresh value).
fn same(a: Option<&JsValue>, b: Option<&JsValue>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(JsValue::Object(_) | JsValue::Array(_)), _)
        | (_, Some(JsValue::Object(_) | JsValue::Array(_))) => false,
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `sameDeliveryChannelRoute` (each field with `?? undefined`).
fn same_route(a: Option<&Route>, b: Option<&Route>) -> bool {
    let channel = |r: Option<&Route>| r.and_then(|r| opt_str(&r.channel));
    let account = |r: Option<&Route>| r.and_then(|r| opt_str(&r.account));
    let to = |r: Option<&Route>| r.and_then(|r| r.target.as_ref()).map(|t| string(&t.to));
    let raw = |r: Option<&Route>| {
        r.and_then(|r| r.target.as_ref())
            .and_then(|t| opt_str(&t.raw_to))
    };
    let chat = |r: Option<&Route>| {
        r.and_then(|r| r.target.as_ref())
            .and_then(|t| t.chat_type.clone())
    };
    let id = |r: Option<&Route>| r.and_then(|r| r.thread.as_ref()).map(|t| t.id.clone());
    let kind = |r: Option<&Route>| {
        r.and_then(|r| r.thread.as_ref())
            .and_then(|t| t.kind.clone())
    };
    let source = |r: Option<&Route>| {
        r.and_then(|r| r.thread.as_ref())
            .and_then(|t| t.source.clone())
    };
    same(channel(a).as_ref(), channel(b).as_ref())
        && same(account(a).as_ref(), account(b).as_ref())
        && same(to(a).as_ref(), to(b).as_ref())
        && same(raw(a).as_ref(), raw(b).as_ref())
        && same(chat(a).as_ref(), chat(b).as_ref())
        && same(id(a).as_ref(), id(b).as_ref())
        && same(kind(a).as_ref(), kind(b).as_ref())
        && same(source(a).as_ref(), source(b).as_ref())
}

/// Sets `key` to `value`, or removes it for `None` (a JavaScript `undefined`).
fn assign(fields: &mut JsObject, key: &str, value: Option<JsValue>) {
    match value {
        Some(v) => fields.insert(key, v),
        None => {
            fields.remove(key);
        }
    }
}

/// R2.14's delivery part (`normalizeSessionEntryDelivery`): `true` when the entry's `route`,
/// `deliveryContext` and `last*` fields were replaced by the reconciled ones.
fn normalise_delivery(fields: &mut JsObject) -> bool {
    let entry_route = route_of(fields.get("route"));
    let delivery_raw = fields.get("deliveryContext").cloned();
    let last_thread = coalesce(
        coalesce(
            fields.get("lastThreadId").cloned(),
            get(delivery_raw.as_ref(), "threadId").cloned(),
        ),
        get(fields.get("origin"), "threadId").cloned(),
    );
    let legacy = delivery(
        coalesce(
            fields.get("lastChannel").cloned(),
            fields.get("channel").cloned(),
        )
        .as_ref(),
        fields.get("lastTo"),
        fields.get("lastAccountId"),
        last_thread.as_ref(),
    );
    // normalizeSessionDeliveryFields
    let route = route_of(entry_route.as_ref().map(route_json).as_ref());
    let route_ctx = delivery_of_route(route.as_ref());
    let ctx = delivery_of(delivery_raw.as_ref());
    let session_ctx = if is_internal(legacy.as_ref()) && has_external_target(ctx.as_ref()) {
        external_over_internal(ctx.as_ref(), legacy.as_ref())
    } else {
        merge(legacy.as_ref(), ctx.as_ref())
    };
    let route_internal = merge(route_ctx.as_ref(), legacy.as_ref());
    let internal_fallback = is_internal(route_ctx.as_ref()) && has_external_target(ctx.as_ref());
    let merged = if internal_fallback {
        external_over_internal(ctx.as_ref(), route_internal.as_ref())
    } else {
        merge(route_ctx.as_ref(), session_ctx.as_ref())
    };
    let next_route = merged.as_ref().and_then(|m| {
        route_with(
            if internal_fallback {
                None
            } else {
                route.as_ref()
            },
            m,
        )
    });
    let m = merged.clone().unwrap_or_default();
    let (last_channel, last_to, last_account, last_thread) = (
        opt_str(&m.channel),
        opt_str(&m.to),
        opt_str(&m.account),
        m.thread.clone(),
    );
    let same_delivery = same(get(delivery_raw.as_ref(), "channel"), last_channel.as_ref())
        && same(get(delivery_raw.as_ref(), "to"), last_to.as_ref())
        && same(
            get(delivery_raw.as_ref(), "accountId"),
            last_account.as_ref(),
        )
        && same(get(delivery_raw.as_ref(), "threadId"), last_thread.as_ref());
    let same_last = same_route(entry_route.as_ref(), next_route.as_ref())
        && same(fields.get("lastChannel"), last_channel.as_ref())
        && same(fields.get("lastTo"), last_to.as_ref())
        && same(fields.get("lastAccountId"), last_account.as_ref())
        && same(fields.get("lastThreadId"), last_thread.as_ref());
    if same_delivery && same_last {
        return false;
    }
    assign(fields, "route", next_route.as_ref().map(route_json));
    assign(
        fields,
        "deliveryContext",
        merged.as_ref().map(delivery_json),
    );
    assign(fields, "lastChannel", last_channel);
    assign(fields, "lastTo", last_to);
    assign(fields, "lastAccountId", last_account);
    assign(fields, "lastThreadId", last_thread);
    true
}

/// `normalizeOptionalDeliveryContext`: an object whose normalised context has a channel and a
/// target.
fn optional_context(value: Option<&JsValue>) -> Option<Delivery> {
    let v = value?;
    v.as_object()?;
    let only = |key: &str, numbers: bool| {
        get(Some(v), key).filter(|x| {
            matches!(x, JsValue::String(_)) || (numbers && matches!(x, JsValue::Number(_)))
        })
    };
    let d = delivery(
        only("channel", false),
        only("to", false),
        only("accountId", false),
        only("threadId", true),
    )?;
    (d.channel.is_some() && d.to.is_some()).then_some(d)
}

/// `sameDeliveryContext(raw, normalised)`.
fn same_context(raw: Option<&JsValue>, d: Option<&Delivery>) -> bool {
    let d = d.cloned().unwrap_or_default();
    same(get(raw, "channel"), opt_str(&d.channel).as_ref())
        && same(get(raw, "to"), opt_str(&d.to).as_ref())
        && same(get(raw, "accountId"), opt_str(&d.account).as_ref())
        && same(get(raw, "threadId"), d.thread.as_ref())
}

/// The reference's `assign`: nothing when the entry's value `===` the coerced one; else the
/// coerced value set, or the field removed.
fn coerce(
    fields: &mut JsObject,
    changed: &mut Vec<&'static str>,
    key: &'static str,
    value: Option<JsValue>,
) {
    if !same(fields.get(key), value.as_ref()) {
        assign(fields, key, value);
        changed.push(key);
    }
}

/// R2.14's pending-delivery part (`normalizePendingFinalDeliveryFields`): each field coerced
/// to its type or removed. Returns the names of the fields changed.
fn normalise_pending(fields: &mut JsObject) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let finite = |v: Option<&JsValue>| match v {
        Some(JsValue::Number(n)) if n.is_finite() && *n >= 0.0 => Some(JsValue::Number(*n)),
        _ => None,
    };
    let string_or_null = |v: Option<&JsValue>| match v {
        Some(x @ (JsValue::Null | JsValue::String(_))) => Some(x.clone()),
        _ => None,
    };
    let v = fields
        .get("pendingFinalDelivery")
        .filter(|v| **v == JsValue::Bool(true))
        .cloned();
    coerce(fields, &mut changed, "pendingFinalDelivery", v);
    let v = string_or_null(fields.get("pendingFinalDeliveryText"));
    coerce(fields, &mut changed, "pendingFinalDeliveryText", v);
    let v = finite(fields.get("pendingFinalDeliveryCreatedAt"));
    coerce(fields, &mut changed, "pendingFinalDeliveryCreatedAt", v);
    let v = finite(fields.get("pendingFinalDeliveryLastAttemptAt"));
    coerce(fields, &mut changed, "pendingFinalDeliveryLastAttemptAt", v);
    let v = match fields.get("pendingFinalDeliveryAttemptCount") {
        Some(JsValue::Number(n)) if n.is_finite() && n.fract() == 0.0 && *n >= 0.0 => {
            Some(JsValue::Number(*n))
        }
        _ => None,
    };
    coerce(fields, &mut changed, "pendingFinalDeliveryAttemptCount", v);
    let v = string_or_null(fields.get("pendingFinalDeliveryLastError"));
    coerce(fields, &mut changed, "pendingFinalDeliveryLastError", v);
    context_field(fields, &mut changed, "pendingFinalDeliveryContext");
    let v = string_or_null(fields.get("pendingFinalDeliveryIntentId"));
    coerce(fields, &mut changed, "pendingFinalDeliveryIntentId", v);
    context_field(fields, &mut changed, "restartRecoveryDeliveryContext");
    let v = match fields.get("restartRecoveryDeliveryRunId") {
        Some(x @ JsValue::String(_)) => Some(x.clone()),
        _ => None,
    };
    coerce(fields, &mut changed, "restartRecoveryDeliveryRunId", v);
    changed
}

/// A delivery-context field of the pending-delivery group: replaced by its normalised context
/// (or removed) unless its channel, to, account and thread already equal that context's.
fn context_field(fields: &mut JsObject, changed: &mut Vec<&'static str>, key: &'static str) {
    let raw = fields.get(key).cloned();
    let d = optional_context(raw.as_ref());
    if !same_context(raw.as_ref(), d.as_ref()) {
        let value = d.as_ref().map(delivery_json);
        coerce(fields, changed, key, value);
    }
}

/// R2.14 on one entry: the delivery fields reconciled, then the pending-delivery fields
/// coerced. Returns the names of the fields that changed (`route` standing for the delivery
/// group).
pub(super) fn normalise_delivery_fields(fields: &mut JsObject) -> Vec<&'static str> {
    let mut changed = Vec::new();
    if normalise_delivery(fields) {
        changed.push("route");
    }
    changed.extend(normalise_pending(fields));
    changed
}
