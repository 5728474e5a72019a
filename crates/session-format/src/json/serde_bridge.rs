//! serde bridge: typed values to and from [`JsValue`]. Serialising builds the object a
//! JavaScript producer would build in the same field order (so `JSON.stringify` key rules
//! apply); deserialising reads numbers as doubles and strings lossily (U+FFFD for lone
//! surrogates).

use std::fmt;

use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};

use super::value::{JsObject, JsString, JsValue};

/// A typed conversion failed (a field of the wrong type, a missing field, an unknown variant).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SerdeError(String);

impl ser::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError(msg.to_string())
    }
}

impl de::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError(msg.to_string())
    }
}

/// Builds the [`JsValue`] a JavaScript producer would build for `value`: struct fields and map
/// entries in order (array-index keys hoisted as JavaScript does), integers as doubles.
///
/// # Errors
/// [`SerdeError`] when a map key is not a string or number.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, SerdeError> {
    value.serialize(ValueSerializer)
}

/// Reads a typed value from a [`JsValue`].
///
/// # Errors
/// [`SerdeError`] naming the field or type that does not fit.
pub fn from_value<T: DeserializeOwned>(value: &JsValue) -> Result<T, SerdeError> {
    T::deserialize(value)
}

// ---------------------------------------------------------------------------------------------
// Serialize / Deserialize for the value types.

impl Serialize for JsString {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_str_lossy())
    }
}

impl Serialize for JsObject {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl Serialize for JsValue {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JsValue::Null => s.serialize_unit(),
            JsValue::Bool(b) => s.serialize_bool(*b),
            JsValue::Number(n) => s.serialize_f64(*n),
            JsValue::String(st) => st.serialize(s),
            JsValue::Array(items) => items.serialize(s),
            JsValue::Object(obj) => obj.serialize(s),
        }
    }
}

struct JsValueVisitor;

impl<'de> Visitor<'de> for JsValueVisitor {
    type Value = JsValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsValue, E> {
        Ok(JsValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsValue, E> {
        Ok(JsValue::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsValue, E> {
        Ok(JsValue::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<JsValue, E> {
        Ok(JsValue::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsValue, E> {
        Ok(JsValue::from(v))
    }
    fn visit_string<E>(self, v: String) -> Result<JsValue, E> {
        Ok(JsValue::from(v))
    }
    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }
    fn visit_none<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsValue::Array(items))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let mut obj = JsObject::new();
        while let Some((k, v)) = map.next_entry::<String, JsValue>()? {
            obj.insert(k, v);
        }
        Ok(JsValue::Object(obj))
    }
}

impl<'de> de::Deserialize<'de> for JsValue {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsValueVisitor)
    }
}

impl<'de> de::Deserialize<'de> for JsObject {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_map(JsValueVisitor)? {
            JsValue::Object(o) => Ok(o),
            _ => Err(de::Error::custom("expected an object")),
        }
    }
}

impl<'de> de::Deserialize<'de> for JsString {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(JsString::new(String::deserialize(d)?))
    }
}

// ---------------------------------------------------------------------------------------------
// Deserializer for &JsValue.

/// The largest integer a double holds exactly; integral numbers within it are offered to
/// visitors as integers so `u64`/`i64` fields can read them.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

impl<'de> de::Deserializer<'de> for &'de JsValue {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self {
            JsValue::Null => visitor.visit_unit(),
            JsValue::Bool(b) => visitor.visit_bool(*b),
            JsValue::Number(n) => {
                let n = *n;
                if n.fract() == 0.0 && n.abs() <= MAX_SAFE {
                    if n >= 0.0 {
                        visitor.visit_u64(n as u64)
                    } else {
                        visitor.visit_i64(n as i64)
                    }
                } else {
                    visitor.visit_f64(n)
                }
            }
            JsValue::String(s) => match s.as_str() {
                Some(text) => visitor.visit_str(text),
                None => visitor.visit_string(s.to_str_lossy().into_owned()),
            },
            JsValue::Array(items) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(items.iter()))
            }
            JsValue::Object(obj) => visitor.visit_map(de::value::MapDeserializer::new(
                obj.iter().map(|(k, v)| (KeyDe(k), v)),
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self {
            JsValue::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self {
            JsValue::String(s) => {
                visitor.visit_enum(s.to_str_lossy().into_owned().into_deserializer())
            }
            JsValue::Object(obj) if obj.len() == 1 => {
                let Some((k, v)) = obj.iter().next() else {
                    return Err(de::Error::custom("expected an enum"));
                };
                visitor.visit_enum(EnumDe {
                    variant: k.to_str_lossy().into_owned(),
                    value: v,
                })
            }
            _ => Err(de::Error::custom(
                "expected a string or a single-key object for an enum",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, SerdeError> for &'de JsValue {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// A map key: read as a string.
struct KeyDe<'de>(&'de JsString);

impl<'de> IntoDeserializer<'de, SerdeError> for KeyDe<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> de::Deserializer<'de> for KeyDe<'de> {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.0.as_str() {
            Some(text) => visitor.visit_str(text),
            None => visitor.visit_string(self.0.to_str_lossy().into_owned()),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        struct enum identifier ignored_any
    }
}

struct EnumDe<'de> {
    variant: String,
    value: &'de JsValue,
}

impl<'de> de::EnumAccess<'de> for EnumDe<'de> {
    type Error = SerdeError;
    type Variant = &'de JsValue;

    fn variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), SerdeError> {
        let variant = seed.deserialize(self.variant.into_deserializer())?;
        Ok((variant, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for &'de JsValue {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<(), SerdeError> {
        Ok(())
    }
    fn newtype_variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, SerdeError> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, SerdeError> {
        de::Deserializer::deserialize_any(self, v)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, SerdeError> {
        de::Deserializer::deserialize_any(self, v)
    }
}

// ---------------------------------------------------------------------------------------------
// Serializer into JsValue.

struct ValueSerializer;

/// Collects sequence elements.
struct SeqBuilder(Vec<JsValue>);
/// Collects map or struct entries.
struct MapBuilder {
    obj: JsObject,
    key: Option<JsString>,
}
/// Collects a `{"Variant": [...]}` or `{"Variant": {...}}` value.
struct VariantBuilder<B> {
    name: &'static str,
    inner: B,
}

fn number(n: f64) -> Result<JsValue, SerdeError> {
    Ok(JsValue::Number(n))
}

impl ser::Serializer for ValueSerializer {
    type Ok = JsValue;
    type Error = SerdeError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = VariantBuilder<SeqBuilder>;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = VariantBuilder<MapBuilder>;

    fn serialize_bool(self, v: bool) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<JsValue, SerdeError> {
        number(v as f64)
    }
    fn serialize_u8(self, v: u8) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<JsValue, SerdeError> {
        number(v as f64)
    }
    fn serialize_f32(self, v: f32) -> Result<JsValue, SerdeError> {
        number(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<JsValue, SerdeError> {
        number(v)
    }
    fn serialize_char(self, v: char) -> Result<JsValue, SerdeError> {
        Ok(JsValue::from(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<JsValue, SerdeError> {
        Ok(JsValue::from(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Array(
            v.iter().map(|&b| JsValue::Number(f64::from(b))).collect(),
        ))
    }
    fn serialize_none(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<JsValue, SerdeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<JsValue, SerdeError> {
        Ok(JsValue::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<JsValue, SerdeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<JsValue, SerdeError> {
        let mut obj = JsObject::new();
        obj.insert(variant, value.serialize(ValueSerializer)?);
        Ok(JsValue::Object(obj))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, SerdeError> {
        Ok(SeqBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, SerdeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, SerdeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantBuilder<SeqBuilder>, SerdeError> {
        Ok(VariantBuilder {
            name: variant,
            inner: SeqBuilder(Vec::with_capacity(len)),
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, SerdeError> {
        Ok(MapBuilder {
            obj: JsObject::new(),
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<MapBuilder, SerdeError> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<VariantBuilder<MapBuilder>, SerdeError> {
        Ok(VariantBuilder {
            name: variant,
            inner: MapBuilder {
                obj: JsObject::new(),
                key: None,
            },
        })
    }
}

impl ser::SerializeSeq for SeqBuilder {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.0.push(value.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Array(self.0))
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for VariantBuilder<SeqBuilder> {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        ser::SerializeSeq::serialize_element(&mut self.inner, value)
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        let mut obj = JsObject::new();
        obj.insert(self.name, JsValue::Array(self.inner.0));
        Ok(JsValue::Object(obj))
    }
}

/// Turns a serialised map key into a property name, as JavaScript's `String(key)` would.
fn key_string(key: JsValue) -> Result<JsString, SerdeError> {
    match key {
        JsValue::String(s) => Ok(s),
        JsValue::Number(n) => Ok(JsString::new(super::write::number_to_string(n))),
        JsValue::Bool(b) => Ok(JsString::new(b.to_string())),
        _ => Err(SerdeError("map keys must be strings or numbers".to_owned())),
    }
}

impl ser::SerializeMap for MapBuilder {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        self.key = Some(key_string(key.serialize(ValueSerializer)?)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerdeError("map value without key".into()))?;
        self.obj.insert(key, value.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Object(self.obj))
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        self.obj.insert(key, value.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Object(self.obj))
    }
}

impl ser::SerializeStructVariant for VariantBuilder<MapBuilder> {
    type Ok = JsValue;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<JsValue, SerdeError> {
        let mut obj = JsObject::new();
        obj.insert(self.name, JsValue::Object(self.inner.obj));
        Ok(JsValue::Object(obj))
    }
}
